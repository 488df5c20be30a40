import type { Change } from '../../../functions/core/change-source';
import { dispatch, registerWebhook } from '../../../functions/core/webhooks';
import { MemoryChangeSource, MemoryFifoQueue, MemoryWebhookStore } from '../../support/webhook-ports';

// Review of issue 27 (c27-hooks), adversarial cases on the memory ports (test/support/webhook-ports.ts).

const DRIVE = 'd';
const START = Date.UTC(2026, 10, 27, 9, 0, 0);
const AT = new Date(START).toISOString();

function world() {
  const now = START;
  const clock = { now: () => now };
  const source = new MemoryChangeSource();
  const store = new MemoryWebhookStore();
  const queue = new MemoryFifoQueue(clock);
  const register = (url: string) =>
    registerWebhook({ store, source, resolve: async () => [{ address: '127.0.0.1', family: 4 }] }, { drive: DRIVE, prefix: '/' }, { url, path: '/' }, { now: new Date(now), allowLoopback: true });
  return { source, store, queue, register };
}

const queuedFor = (queue: MemoryFifoQueue, webhookId: string) =>
  queue.messages.filter((m) => m.groupId === webhookId).map((m) => (JSON.parse(m.body) as { change: Change }).change.path);

describe('Webhooks review: a webhook made while the dispatcher runs', () => {
  it('is sent the changes made after it, though a dispatcher that listed the webhooks before it advanced past them', async () => {
    // Prepare: webhook A and one change; the dispatcher's first read of the log is where webhook B is made
    // (as another Lambda would, between the dispatcher's list of webhooks and its read) and a change written.
    const w = world();
    await w.register('http://127.0.0.1:9/a');
    w.source.append(DRIVE, { type: 'folder.created', path: '/before-b', at: AT });
    let b: string | undefined;
    const read = w.source.read.bind(w.source);
    w.source.read = async (drive, after, limit) => {
      if (b === undefined) {
        b = (await w.register('http://127.0.0.1:9/b')).id;
        w.source.append(DRIVE, { type: 'folder.created', path: '/after-b', at: AT });
      }
      return read(drive, after, limit);
    };

    // Act: that run, and the next ones.
    await dispatch(w, DRIVE, { now: new Date(START) });
    await dispatch(w, DRIVE, { now: new Date(START) });
    await dispatch(w, DRIVE, { now: new Date(START) });

    // Assess: B was made after /before-b and before /after-b: it is owed /after-b.
    expect(queuedFor(w.queue, b!)).toEqual(['/after-b']);
  });
});
