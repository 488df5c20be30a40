import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { matchPath } from '../routes';

/** An answer that the OpenAPI document does not allow, as the host records it. */
export interface ContractViolation {
  method: string;
  /** The path called (never its query, which may hold nothing secret but is noise); a share link's token is replaced by the route's. */
  path: string;
  /** The document's path template it matched, if any. */
  route?: string;
  status: number;
  problem: string;
}

/** The file in the host's data dir where each answer the document does not allow is a JSON line. */
export const CONTRACT_VIOLATIONS_FILE = 'contract-violations.jsonl';

/** The most of a JSON answer held to check it: a bigger one (a huge listing) is let through unchecked. */
const MAX_CHECKED_BYTES = 16 * 1024 * 1024;

type Document = {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject | { $ref: string }> }>>;
  components: { responses: Record<string, ResponseObject> };
};
type ResponseObject = { headers?: Record<string, { required?: boolean } | { $ref: string }>; content?: Record<string, unknown> };

/**
 * Checks each answer the local host sends against the OpenAPI document: that its status is one the operation
 * lists, its Content-Type one the status lists, its required headers present, and a JSON body valid against
 * the schema. It only observes: the answer goes out exactly as it would without it. Host-only (tests set
 * `DRIVE_CHECK_CONTRACT=1`); never in a Lambda bundle.
 */
export class ContractChecker {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: string[];

  private readonly document: Document;

  /** `document` is an OpenAPI 3.1 document (functions/openapi/document.ts); `report` hears each violation. */
  constructor(
    document: object,
    private readonly report: (violation: ContractViolation) => void,
  ) {
    this.document = document as Document;
    // strict off: the document is an OpenAPI document holding schemas, not a schema (its `openapi`, `paths`…).
    // validateSchema off: test/unit/openapi/document.test.ts validates the document once; checking it against
    // JSON Schema's meta-schema here took 70–160 ms of CPU at each of the suite's 80-odd host starts.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema(document, 'openapi');
    // Literal paths before templates, as API Gateway matches them (/openapi.json before /{file}).
    this.templates = Object.keys(this.document.paths).sort((a, b) => Number(a.includes('{')) - Number(b.includes('{')));
  }

  /** Watches `res`, the answer to `req`, and checks it once it is sent. */
  observe(req: IncomingMessage, res: ServerResponse): void {
    const method = (req.method ?? 'GET').toUpperCase();
    let pathname: string;
    try {
      pathname = new URL(`http://localhost${req.url ?? '/'}`).pathname;
    } catch {
      pathname = '(not a URL)';
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let headersAtStart: OutgoingHttpHeaders | undefined;
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function' || size > MAX_CHECKED_BYTES) return;
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array);
      size += buffer.length;
      if (size <= MAX_CHECKED_BYTES) chunks.push(buffer);
    };
    const writeHead = res.writeHead;
    // Headers given to writeHead itself are not kept where getHeaders() reads them: noted here, as sent.
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      const headers = args.find((arg, i) => i > 0 && typeof arg === 'object' && arg !== null) as OutgoingHttpHeaders | string[] | undefined;
      headersAtStart = { ...res.getHeaders(), ...lowerCased(headers) };
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse['writeHead'];
    const write = res.write;
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as ServerResponse['write'];
    const end = res.end;
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as ServerResponse['end'];
    res.once('finish', () => {
      const headers = { ...res.getHeaders(), ...headersAtStart };
      const body = size > MAX_CHECKED_BYTES ? undefined : Buffer.concat(chunks);
      for (const problem of this.check(method, pathname, res.statusCode, headers, body)) this.report(problem);
    });
  }

  /** The violations of one answer: `body` undefined when it was too large to hold. */
  check(method: string, pathname: string, status: number, headers: OutgoingHttpHeaders, body: Buffer | undefined): ContractViolation[] {
    const template = this.templates.find((candidate) => matchPath(candidate, pathname) !== undefined);
    const shown = template?.includes('{token}') ? template : pathname;
    const violation = (problem: string): ContractViolation => ({ method, path: shown, ...(template ? { route: template } : {}), status, problem });
    const operation = template ? this.document.paths[template][method.toLowerCase()] : undefined;
    if (!operation) {
      // A CORS preflight is the gateway's own (no operation), answered 204 where CORS origins are configured;
      // without them OPTIONS is a method with no route, as anything else with no route: the gateway's 404.
      if (method === 'OPTIONS' && template && status === 204) return [];
      if (status !== 404) return [violation(`no operation ${method} ${template ?? pathname}, whose answer is the gateway's 404`)];
      return this.checkAnswer('#/components/responses/Error404', this.document.components.responses.Error404, method, headers, body, violation);
    }
    const response = operation.responses[String(status)];
    if (!response) return [violation(`status ${status} is not one the operation lists (${Object.keys(operation.responses).join(', ')})`)];
    const pointer = '$ref' in response ? response.$ref : `#/paths/${escape(template!)}/${method.toLowerCase()}/responses/${status}`;
    const resolved = '$ref' in response ? this.document.components.responses[response.$ref.split('/').pop()!] : response;
    return this.checkAnswer(pointer, resolved, method, headers, body, violation);
  }

  private checkAnswer(pointer: string, response: ResponseObject, method: string, headers: OutgoingHttpHeaders, body: Buffer | undefined, violation: (problem: string) => ContractViolation): ContractViolation[] {
    const problems: ContractViolation[] = [];
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const required = '$ref' in header ? this.headerRequired(header.$ref) : header.required === true;
      if (required && headers[name.toLowerCase()] === undefined) problems.push(violation(`header ${name} is required`));
    }
    const contentType = String(headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const content = response.content;
    if (!content) {
      if (body !== undefined && body.length > 0) problems.push(violation('the answer has a body where the document has none'));
      return problems;
    }
    const type = contentType.split('/')[0];
    const media = Object.keys(content).find((key) => key === contentType) ?? Object.keys(content).find((key) => key === '*/*' || key === `${type}/*`);
    if (!media) return [...problems, violation(`Content-Type ${JSON.stringify(contentType)} is not one of ${Object.keys(content).join(', ')}`)];
    // A HEAD answer has no body (RFC 9110 §9.3.2); only bodies the document says are JSON are checked against
    // schemas (a downloaded file may be JSON, but it is the user's bytes, `*/*`).
    if (method === 'HEAD' || body === undefined || media !== 'application/json') return problems;
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      return [...problems, violation(`the body is not JSON: ${JSON.stringify(body.toString('utf8').slice(0, 120))}`)];
    }
    const validate = this.validator(`${pointer}/content/${escape(media)}/schema`);
    if (!validate(value)) {
      const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
      problems.push(violation(`the body does not match ${pointer}: ${errors.join('; ')}`));
    }
    return problems;
  }

  private headerRequired(ref: string): boolean {
    const components = (this.document.components as { headers?: Record<string, { required?: boolean }> }).headers ?? {};
    return components[ref.split('/').pop()!]?.required === true;
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }
}

/** A JSON Pointer segment for `key`. */
function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function lowerCased(headers: OutgoingHttpHeaders | string[] | undefined): OutgoingHttpHeaders {
  if (!headers) return {};
  if (Array.isArray(headers)) {
    const out: OutgoingHttpHeaders = {};
    for (let i = 0; i + 1 < headers.length; i += 2) out[headers[i].toLowerCase()] = headers[i + 1];
    return out;
  }
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
