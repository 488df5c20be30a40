import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { DriveError } from '../../functions/core/errors';
import { completeUpload, startUpload } from '../../functions/core/large-upload';
import type { FileNode, WriteCondition } from '../../functions/core/ports';
import { type UploadTarget, uploadFiles } from '../../functions/core/upload';
import { type MemoryPorts, gatePorts, memoryMultipart, memoryPorts, memorySessions } from './memory-ports';
import { StepScheduler } from './step-scheduler';

// The conditions of an upload (`if_match`, `if_none_match`; protocol/README.md, "Transitions", `putFile`) held
// against a concurrent replace: the condition rides on the record's write, so no order of the port calls lets
// a conditional upload replace a version it did not name, and one refused stores nothing (no record, no bytes).

const DRIVE = 'd';
const md5 = (text: string) => createHash('md5').update(text).digest('hex');

type Upload = { files: { path: string; body: string }[]; targets: UploadTarget[] };
type Answer = { ok: true } | { ok: false; code: string };

/** Seeds `/a` with `/a/f` holding `v0`, then runs `uploads` at once under `s`. */
async function race(s: StepScheduler, uploads: readonly Upload[]): Promise<{ answers: Answer[]; ports: MemoryPorts }> {
  const ports = memoryPorts();
  await uploadFiles(ports, DRIVE, [{ filename: 'f', data: Buffer.from('v0') }], [{ path: '/a/f' }]);
  const gated = gatePorts(ports, (label) => s.gate(label));
  const answers: Answer[] = [];
  let ended = 0;
  uploads.forEach((upload, i) => {
    const parts = upload.files.map((file) => ({ filename: 'x', data: Buffer.from(file.body) }));
    void uploadFiles(gated, DRIVE, parts, upload.targets).then(
      () => {
        answers[i] = { ok: true };
        ended++;
      },
      (error: unknown) => {
        answers[i] = { ok: false, code: error instanceof DriveError ? error.code : String(error) };
        ended++;
      },
    );
  });
  await s.run(() => ended === uploads.length);
  return { answers, ports };
}

/** What is stored at `path` (its bytes, as text), and the bodies of every object left in the store. */
function storedAt(ports: MemoryPorts, path: string): string | undefined {
  const node = ports.nodes.peek(DRIVE, path) as FileNode | undefined;
  return node ? ports.objects.objects.get(node.objectKey)?.body.toString() : undefined;
}
const bodies = (ports: MemoryPorts) => [...ports.objects.objects.values()].map(({ body }) => body.toString()).sort();

describe('a condition checked against a concurrent replace', () => {
  it.each([
    ['one file', [{ path: '/a/f', body: 'A' }], [{ path: '/a/f', ifMatch: md5('v0') }]],
    ['two files, the second conditional', [{ path: '/a/g', body: 'A2' }, { path: '/a/f', body: 'A' }], [{ path: '/a/g' }, { path: '/a/f', ifMatch: md5('v0') }]],
  ] as [string, Upload['files'], UploadTarget[]][])(
    'an if_match upload (%s) never replaces the version another upload wrote, and stores nothing when refused',
    async (_name, files, targets) => {
      const conditional: Upload = { files, targets };
      const plain: Upload = { files: [{ path: '/a/f', body: 'B' }], targets: [{ path: '/a/f' }] };
      const seen = new Set<string>();
      await fc.assert(
        fc.asyncProperty(fc.nat(), async (order) => {
          const s = new StepScheduler(order);
          const { answers, ports } = await race(s, [conditional, plain]);
          const [a, b] = answers;
          seen.add(`${a.ok ? 'ok' : a.code}/${b.ok ? 'ok' : b.code}`);
          // The plain upload always stores; the conditional one either wrote over v0 before it, or was refused.
          expect(b).toEqual({ ok: true });
          expect(storedAt(ports, '/a/f')).toBe('B');
          if (a.ok) {
            // It wrote over v0: its putFile of /a/f came before B's.
            const writes = s.trace.filter((step) => step.startsWith('nodes.putFile(d, /a/f'));
            expect(writes).toHaveLength(2);
            if (files.length === 2) expect(storedAt(ports, '/a/g')).toBe('A2');
          } else {
            expect(a).toEqual({ ok: false, code: 'precondition_failed' });
            // Nothing of it stands: no record, no bytes.
            expect(ports.nodes.peek(DRIVE, '/a/g')).toBeUndefined();
            expect(bodies(ports)).toEqual(['B']);
          }
        }),
        { numRuns: 300, seed: 26 },
      );
      // Both outcomes occur among the orders tried: the race is run, not avoided.
      expect([...seen].sort()).toEqual(['ok/ok', 'precondition_failed/ok']);
    },
  );

  it('of two if_none_match uploads to one new path, exactly one stores, the other is refused and leaves no bytes', async () => {
    const create = (body: string): Upload => ({ files: [{ path: '/a/n', body }], targets: [{ path: '/a/n', ifNoneMatch: '*' }] });
    await fc.assert(
      fc.asyncProperty(fc.nat(), async (order) => {
        const s = new StepScheduler(order);
        const { answers, ports } = await race(s, [create('X'), create('Y')]);
        const winners = answers.flatMap((answer, i) => (answer.ok ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(answers[1 - winners[0]]).toEqual({ ok: false, code: 'precondition_failed' });
        expect(storedAt(ports, '/a/n')).toBe(winners[0] === 0 ? 'X' : 'Y');
        expect(bodies(ports)).toEqual([winners[0] === 0 ? 'X' : 'Y', 'v0'].sort());
      }),
      { numRuns: 300, seed: 26 },
    );
  });

  it('refuses on the read, before any record write, a condition the read already fails', async () => {
    const s = new StepScheduler(0);
    const { answers, ports } = await race(s, [{ files: [{ path: '/a/f', body: 'A' }], targets: [{ path: '/a/f', ifMatch: md5('stale') }] }]);
    expect(answers).toEqual([{ ok: false, code: 'precondition_failed' }]);
    expect(s.trace.filter((step) => step.startsWith('nodes.putFile'))).toEqual([]);
    expect(storedAt(ports, '/a/f')).toBe('v0');
    expect(bodies(ports)).toEqual(['v0']);
  });
});

// A large upload's completion writes its record on another path through `commitFiles` (its bytes kept for a
// retry, the record `pending` on its session, no journal entry): the session's condition, held by the same
// `putFile`, raced with a plain replace over every order of the port calls, assembly included.
describe("a large upload's condition at completion, against a concurrent replace", () => {
  it.each([
    ['if_match', '/a/f', { ifMatch: md5('v0') }],
    ['if_none_match', '/a/n', { ifNoneMatch: '*' }],
  ] as [string, string, WriteCondition][])(
    '%s: the completion never replaces the file the other upload wrote, and refused it leaves no record, no object, no parts, no session',
    async (_name, path, condition) => {
      const seen = new Set<string>();
      await fc.assert(
        fc.asyncProperty(fc.nat(), async (order) => {
          const s = new StepScheduler(order);
          const ports = memoryPorts();
          await uploadFiles(ports, DRIVE, [{ filename: 'f', data: Buffer.from('v0') }], [{ path: '/a/f' }]);
          const parts = memoryMultipart(ports);
          const sessions = memorySessions();
          const { session } = await startUpload({ nodes: ports.nodes, objects: ports.objects, parts, sessions }, DRIVE, { path, size: 1, condition }, { maxFileBytes: 10, expirySeconds: 3600 });
          const gated = gatePorts({ nodes: ports.nodes, objects: ports.objects, parts }, (label) => s.gate(label));
          const answers: Answer[] = [];
          let ended = 0;
          const settle = (i: number) => [
            () => ((answers[i] = { ok: true }), ended++),
            (error: unknown) => ((answers[i] = { ok: false, code: error instanceof DriveError ? error.code : String(error) }), ended++),
          ];
          void completeUpload({ ...gated, sessions }, DRIVE, session.id, [{ number: 1, etag: '"p1"' }]).then(...settle(0));
          void uploadFiles(gated, DRIVE, [{ filename: 'x', data: Buffer.from('B') }], [{ path }]).then(...settle(1));
          await s.run(() => ended === 2);

          const [large, plain] = answers;
          seen.add(`${large.ok ? 'ok' : large.code}/${plain.ok ? 'ok' : plain.code}`);
          expect(plain).toEqual({ ok: true });
          expect(storedAt(ports, path)).toBe('B');
          if (large.ok) {
            // It wrote first, and the plain upload replaced it (and freed its object).
            expect(s.trace.filter((step) => step.startsWith(`nodes.putFile(d, ${path}`))).toHaveLength(2);
          } else {
            expect(large).toEqual({ ok: false, code: 'precondition_failed' });
          }
          // Either way nothing of the large upload stays: no object, no parts, no session.
          expect(bodies(ports)).toEqual(path === '/a/f' ? ['B'] : ['B', 'v0']);
          expect(parts.open.size).toBe(0);
          expect(sessions.held.size).toBe(0);
        }),
        { numRuns: 300, seed: 26 },
      );
      expect([...seen].sort()).toEqual(['ok/ok', 'precondition_failed/ok']);
    },
  );
});
