import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ContractViolation, ContractChecker } from '../../../lib/local/contract';
import { openApiDocument } from '../../../functions/openapi/document';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };
const body = (value: unknown) => Buffer.from(JSON.stringify(value));
const whoami = { role: 'admin', prefix: '/', drive: 'default', key_id: '0123456789abcdef' };

describe('Class: ContractChecker (lib/local/contract.ts)', () => {
  let violations: ContractViolation[];
  let checker: ContractChecker;

  beforeEach(() => {
    violations = [];
    checker = new ContractChecker(openApiDocument(), (violation) => violations.push(violation));
  });

  describe('Method: check', () => {
    it('passes an answer the document allows', () => {
      expect(checker.check('GET', '/drive/whoami', 200, JSON_TYPE, body({ data: whoami }))).toEqual([]);
      expect(checker.check('GET', '/drive/whoami', 401, JSON_TYPE, body({ error: { code: 'unauthorized', message: 'no key', request_id: 'r-1' } }))).toEqual([]);
    });

    it('catches a field the document does not have, and one it requires that is missing', () => {
      const [extra] = checker.check('GET', '/drive/whoami', 200, JSON_TYPE, body({ data: { ...whoami, secret: 'x' } }));
      expect(extra.problem).toMatch(/must NOT have additional properties \(secret\)/);
      const [missing] = checker.check('GET', '/drive/whoami', 200, JSON_TYPE, body({ data: { role: 'admin', prefix: '/', drive: 'default' } }));
      expect(missing.problem).toMatch(/must have required property 'key_id'/);
    });

    it('catches a status the operation does not list, and an error code that is not its status\'s', () => {
      expect(checker.check('GET', '/drive/whoami', 418, JSON_TYPE, body({ error: { code: 'bad_request', message: '' } }))[0].problem).toMatch(/status 418 is not one the operation lists/);
      expect(checker.check('GET', '/drive/whoami', 401, JSON_TYPE, body({ error: { code: 'forbidden', message: '' } }))[0].problem).toMatch(/must be equal to constant/);
      expect(checker.check('GET', '/drive/whoami', 401, JSON_TYPE, body({ error: { code: 'nonsense', message: '' } }))[0].problem).toMatch(/must be equal to one of the allowed values/);
    });

    it('catches a Content-Type the status does not list, a body that is not JSON, and a missing required header', () => {
      expect(checker.check('GET', '/drive/whoami', 200, { 'content-type': 'text/html' }, Buffer.from('<p>'))[0].problem).toMatch(/Content-Type "text\/html" is not one of application\/json/);
      expect(checker.check('GET', '/drive/whoami', 200, JSON_TYPE, Buffer.from('{"data":'))[0].problem).toMatch(/the body is not JSON/);
      const job = { id: '7f9c2ba4-e88f-4c1e-9d5a-3b2e1f0a9c8d', type: 'delete-folder', status: 'running', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', url: 'http://h/drive/jobs/x', path: '/a', files_deleted: 0, result: null };
      expect(checker.check('DELETE', '/drive/folders', 202, JSON_TYPE, body({ data: { job } })).map((v) => v.problem)).toEqual(['header Location is required']);
    });

    it('holds a path no route has to the gateway\'s 404, and names a share link by its route, never its token', () => {
      expect(checker.check('GET', '/drive/nothing', 404, JSON_TYPE, body({ error: { code: 'not_found', message: 'no such route' } }))).toEqual([]);
      expect(checker.check('GET', '/drive/nothing', 200, JSON_TYPE, body({}))[0].problem).toMatch(/no operation GET \/drive\/nothing/);
      const [link] = checker.check('GET', '/s/secret-token', 200, { 'content-type': 'text/plain', etag: '"e"' }, Buffer.from('x'));
      expect(link).toBeUndefined();
      const [wrong] = checker.check('GET', '/s/secret-token', 418, JSON_TYPE, body({}));
      expect(wrong).toMatchObject({ path: '/s/{token}', route: '/s/{token}' });
    });
  });

  describe('Method: observe', () => {
    it('reports a wrong answer a server sends, and sends it unchanged', async () => {
      // Prepare: a server that answers whoami without key_id, through writeHead, write and end.
      const server = createServer((req, res) => {
        checker.observe(req, res);
        res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
        res.write('{"data":{"role":"admin",');
        res.end('"prefix":"/","drive":"default"}}');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      try {
        // Act
        const received = await new Promise<string>((resolve, reject) => {
          request({ host: '127.0.0.1', port, path: '/drive/whoami', agent: false }, (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () => resolve(text));
          }).on('error', reject).end();
        });
        await new Promise((resolve) => setImmediate(resolve));
        // Assess
        expect(received).toBe('{"data":{"role":"admin","prefix":"/","drive":"default"}}');
        expect(violations).toEqual([expect.objectContaining({ method: 'GET', path: '/drive/whoami', status: 200, problem: expect.stringMatching(/required property 'key_id'/) })]);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });
});
