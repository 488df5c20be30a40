import type { Change } from '../../../functions/core/change-source';
import { workDeliveries } from '../../../functions/core/delivery-worker';
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

/**
 * The memory FIFO queue with SQS's retention period: a message older than it (counted from its send) is
 * deleted by SQS whether it waits or is in flight. The stack keeps deliveries 2 days (lib/drive-stack.ts,
 * `Deliveries`, retentionPeriod: Duration.days(2)).
 */
class RetainingFifoQueue extends MemoryFifoQueue {
  private readonly sentAt = new Map<string, number>();

  constructor(
    private readonly clockOf: { now: () => number },
    private readonly retentionMs: number,
  ) {
    super(clockOf);
  }

  override async send(messages: readonly Parameters<MemoryFifoQueue['send']>[0][number][]): Promise<void> {
    for (const message of messages) if (!this.sentAt.has(`${message.webhookId}.${message.change.id}`)) this.sentAt.set(`${message.webhookId}.${message.change.id}`, this.clockOf.now());
    await super.send(messages);
  }

  override receive() {
    const now = this.clockOf.now();
    for (const held of [...this.messages]) if (now - this.sentAt.get(held.id)! >= this.retentionMs) this.delete(held.id);
    return super.receive();
  }
}

describe('Webhooks review: a receiver that is down for good', () => {
  it('has every undelivered change listed as a failed delivery, the later ones of its group included', async () => {
    // Prepare: three changes queued at once for one webhook whose receiver always answers 503; the queue
    // keeps messages 2 days, as the stack's does; the default retry policy (24 hours).
    let now = START;
    const clock = { now: () => now };
    const source = new MemoryChangeSource();
    const store = new MemoryWebhookStore();
    const queue = new RetainingFifoQueue(clock, 2 * 24 * 60 * 60 * 1000);
    const hook = await registerWebhook({ store, source, resolve: async () => [{ address: '127.0.0.1', family: 4 }] }, { drive: DRIVE, prefix: '/' }, { url: 'http://127.0.0.1:9/down', path: '/' }, { now: new Date(now), allowLoopback: true });
    for (const path of ['/one', '/two', '/three']) source.append(DRIVE, { type: 'folder.created', path, at: AT });
    await dispatch({ source, store, queue }, DRIVE, { now: new Date(now) });
    const post = async () => ({ status: 503 });

    // Act: Lambda's event source, the clock jumping to the next visible message.
    for (let round = 0; round < 1000; round++) {
      const records = queue.receive();
      if (records.length === 0) {
        const next = queue.nextVisibleAt();
        if (next === undefined) break;
        now = Math.max(now, next);
        continue;
      }
      for (const record of records) {
        const failed = await workDeliveries({ store, post, hide: (handle, seconds) => queue.hide(handle, seconds) }, [record], { now: () => new Date(now) });
        if (!failed.includes(record.messageId)) queue.delete(record.messageId);
      }
    }

    // Assess: none acknowledged, so each is written off and listed, none lost unrecorded.
    expect(queue.messages).toEqual([]);
    expect((await store.failures(DRIVE, hook.id, 100)).map((f) => f.change.path)).toEqual(['/one', '/two', '/three']);
  });
});

describe('Webhooks review: the limit of webhooks a drive', () => {
  it('holds when two registrations race for the last place', async () => {
    // Prepare: 19 webhooks, one place left.
    const w = world();
    for (let i = 0; i < 19; i++) await w.register(`http://127.0.0.1:9/${i}`);

    // Act: two registrations at once (two Lambdas).
    const outcomes = await Promise.allSettled([w.register('http://127.0.0.1:9/x'), w.register('http://127.0.0.1:9/y')]);

    // Assess: one made, one refused; never more than 20.
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(await w.store.list(DRIVE)).toHaveLength(20);
  });
});
