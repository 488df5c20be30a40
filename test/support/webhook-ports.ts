import type { Change, ChangePage, ChangeSource } from '../../functions/core/change-source';
import type { DeliveryRecord } from '../../functions/core/delivery-worker';
import type { DeliveryMessage, DeliveryQueue, FailedDelivery, WebhookRecord, WebhookStore } from '../../functions/core/webhooks';
import { deliveryId } from '../../functions/core/webhooks';
import { DeduplicationWindow, deliverable } from '../../lib/local/fifo';

// The webhooks' ports in memory, with the conditions of their adapters: every method one atomic step.

/** A drive's log of changes, appended to by the test; positions 1, 2, 3… as the sequencer numbers them. */
export class MemoryChangeSource implements ChangeSource {
  private readonly logs = new Map<string, Change[]>();
  /** Positions not yet visible to readers (a transaction caught mid-commit): a read stops before the first. */
  readonly hidden = new Set<number>();

  /** Appends a change (its `id` the next position) and answers it. */
  append(drive: string, change: Omit<Change, 'id'>): Change {
    const log = this.logs.get(drive) ?? [];
    this.logs.set(drive, log);
    const full = { id: String(log.length + 1), ...change } as Change;
    log.push(full);
    return full;
  }

  async read(drive: string, after: number, limit: number): Promise<ChangePage> {
    const log = this.logs.get(drive) ?? [];
    const changes: Change[] = [];
    for (const change of log.slice(after)) {
      if (changes.length >= limit || this.hidden.has(Number(change.id))) break;
      changes.push(structuredClone(change));
    }
    return { changes, position: changes.length > 0 ? Number(changes[changes.length - 1].id) : after };
  }

  async head(drive: string): Promise<number> {
    return this.logs.get(drive)?.length ?? 0;
  }

  cursor(drive: string, subtree: string, position: number, now: Date): string {
    return Buffer.from(JSON.stringify({ v: 1, d: drive, p: subtree, s: position, t: Math.floor(now.getTime() / 1000) })).toString('base64url');
  }
}

/** The webhook items, the dispatcher's position and the failed deliveries, per drive. */
export class MemoryWebhookStore implements WebhookStore {
  readonly hooks = new Map<string, WebhookRecord>();
  readonly positions = new Map<string, number>();
  readonly failed: FailedDelivery[] = [];

  async create(record: WebhookRecord, max: number): Promise<boolean> {
    const key = `${record.drive}#${record.id}`;
    if (this.hooks.has(key)) throw new Error('condition failed: the webhook exists');
    if ([...this.hooks.values()].filter((hook) => hook.drive === record.drive).length >= max) return false;
    this.hooks.set(key, structuredClone(record));
    return true;
  }

  async drives(): Promise<string[]> {
    return [...new Set([...this.hooks.values()].map((hook) => hook.drive))].sort();
  }

  async list(drive: string): Promise<WebhookRecord[]> {
    return [...this.hooks.values()].filter((hook) => hook.drive === drive).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id)).map((hook) => structuredClone(hook));
  }

  async get(drive: string, id: string): Promise<WebhookRecord | undefined> {
    const hook = this.hooks.get(`${drive}#${id}`);
    return hook && structuredClone(hook);
  }

  async remove(drive: string, id: string): Promise<boolean> {
    const gone = this.hooks.delete(`${drive}#${id}`);
    if (gone) this.failed.splice(0, this.failed.length, ...this.failed.filter((f) => f.webhookId !== id));
    return gone;
  }

  async position(drive: string): Promise<number | undefined> {
    return this.positions.get(drive);
  }

  async advance(drive: string, from: number | undefined, to: number): Promise<boolean> {
    if (this.positions.get(drive) !== from) return false;
    this.positions.set(drive, to);
    return true;
  }

  async fail(_drive: string, failure: FailedDelivery): Promise<void> {
    if (!this.failed.some((f) => f.id === failure.id)) this.failed.push(structuredClone(failure));
  }

  async failures(_drive: string, webhookId: string, limit: number): Promise<FailedDelivery[]> {
    return this.failed.filter((f) => f.webhookId === webhookId).sort((a, b) => a.position - b.position).slice(0, limit).map((f) => structuredClone(f));
  }
}

interface Held {
  id: string;
  groupId: string;
  sequence: number;
  visibleAt: number;
  body: string;
  receiveCount: number;
  sentAt: number;
  firstReceivedAt?: number;
}

/**
 * The deliveries queue in memory, on a clock the test drives: SQS FIFO's rules (lib/local/fifo.ts), the
 * message group the webhook, the deduplication id the delivery's; `receive` hands messages out as Lambda's
 * event source mapping does, with the attributes the worker reads.
 */
export class MemoryFifoQueue implements DeliveryQueue {
  readonly messages: Held[] = [];
  private readonly window = new DeduplicationWindow();
  private sequence = 0;
  /** Every send, duplicates included: what the dispatcher asked for. */
  sends = 0;

  constructor(
    private readonly clock: { now: () => number },
    private readonly visibilityMs = 60_000,
  ) {}

  async send(messages: readonly DeliveryMessage[]): Promise<void> {
    for (const message of messages) {
      this.sends++;
      const id = deliveryId(message);
      if (this.window.duplicate(id, this.clock.now())) continue;
      this.messages.push({ id, groupId: message.webhookId, sequence: this.sequence++, visibleAt: this.clock.now(), body: JSON.stringify(message), receiveCount: 0, sentAt: this.clock.now() });
    }
  }

  /** The messages deliverable now, received: hidden for the visibility timeout, their counts raised. */
  receive(): DeliveryRecord[] {
    const now = this.clock.now();
    return deliverable(this.messages, now).map((held) => {
      held.receiveCount++;
      held.firstReceivedAt ??= now;
      held.visibleAt = now + this.visibilityMs;
      return {
        messageId: held.id,
        receiptHandle: `${held.id}#${held.receiveCount}`,
        body: held.body,
        attributes: { ApproximateReceiveCount: String(held.receiveCount), ApproximateFirstReceiveTimestamp: String(held.firstReceivedAt), SentTimestamp: String(held.sentAt) },
      };
    });
  }

  delete(messageId: string): void {
    const at = this.messages.findIndex((held) => held.id === messageId);
    if (at >= 0) this.messages.splice(at, 1);
  }

  /** `ChangeMessageVisibility`: the message is hidden `seconds` from now. */
  async hide(receiptHandle: string, seconds: number): Promise<void> {
    const held = this.messages.find((m) => `${m.id}#${m.receiveCount}` === receiptHandle);
    if (held) held.visibleAt = this.clock.now() + seconds * 1000;
  }

  /** When the next group's oldest message becomes visible (the rest wait behind it), or undefined when the queue is empty. */
  nextVisibleAt(): number | undefined {
    const heads = new Map<string, Held>();
    for (const held of [...this.messages].sort((a, b) => a.sequence - b.sequence)) if (!heads.has(held.groupId)) heads.set(held.groupId, held);
    return heads.size === 0 ? undefined : Math.min(...[...heads.values()].map((m) => m.visibleAt));
  }
}
