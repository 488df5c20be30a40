import { join } from 'node:path';
import { SETTINGS } from '../../../functions/config';
import { ROUTE_SPECS } from '../../../functions/http/routes';

// The route table marks the routes that honour Idempotency-Key (issue 26); each handler module of such a
// route must give its endpoint the idempotency store, and no other may (a key it ignored would be a lie).

const ISSUE_26_ROUTES = [
  'POST /drive/upload',
  'POST /drive/folders',
  'DELETE /drive/folders',
  'DELETE /drive/files',
  'POST /drive/move',
  'POST /drive/copy',
  'POST /drive/links',
  'POST /drive/uploads',
  'POST /drive/uploads/{upload_id}/complete',
  'POST /drive/keys',
  // Issue 27: registering a webhook, as every mutating route (docs/change-feed-design.md, "Routes, roles, limits").
  'POST /drive/webhooks',
  // The trash's mutating routes (issue 28), as every mutating route since issue 26.
  'POST /drive/trash/restore',
  'DELETE /drive/trash/{item_id}',
  'DELETE /drive/trash',
];

const savedEnv = { ...process.env };
// The variables set for the handler modules go with this file: the worker's next file sees the environment it had.
afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
});

describe('the routes marked idempotent (functions/http/routes.ts)', () => {
  it('are the mutating routes issue 26 lists', () => {
    expect(ROUTE_SPECS.filter((spec) => spec.idempotent).map((spec) => `${spec.method} ${spec.path}`).sort()).toEqual([...ISSUE_26_ROUTES].sort());
  });

  it('are served by handlers that keep keys, and only they', () => {
    // The handler modules build their clients at load, from the environment a function gets.
    for (const name of ['nodesTable', 'accessTable', 'uploadsTable', 'changesTable', 'bucket', 'jobQueueUrl'] as const) process.env[SETTINGS[name].name] ??= `test-${name}`;
    const handlers = [...new Set(ROUTE_SPECS.filter((spec) => spec.permission !== undefined && !spec.streaming).map((spec) => spec.handler))];
    for (const name of handlers) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { handler } = require(join(__dirname, '..', '..', '..', 'functions', `${name}.ts`)) as { handler: { idempotent?: boolean } };
      const marked = ROUTE_SPECS.filter((spec) => spec.handler === name).map((spec) => spec.idempotent === true);
      // A handler serves one route here, or several that agree.
      expect({ name, idempotent: handler.idempotent }).toEqual({ name, idempotent: marked.every(Boolean) });
      expect({ name, agree: marked.every((mark) => mark === marked[0]) }).toEqual({ name, agree: true });
    }
  });
});
