/**
 * SQS FIFO's delivery rules, as the embedded queue and the tests' memory queue apply them (AWS's developer
 * guide, "FIFO queue delivery logic" and "Exactly-once processing"): within a message group, messages go
 * out one at a time in the order they were sent, and while the group's oldest message is received and not
 * deleted (its visibility timeout running, or set by `ChangeMessageVisibility`) nothing behind it is; a
 * message sent with a deduplication id already sent in the last 5 minutes is accepted and dropped.
 */

/** How long a deduplication id is remembered. */
export const DEDUPLICATION_MS = 5 * 60 * 1000;

/** What the rules read of a stored message. */
export interface QueuedMessage {
  id: string;
  /** FIFO only: the group; absent on a standard queue, where every message stands alone. */
  groupId?: string;
  /** The order messages were sent in (a counter: two sends in one millisecond keep their order). */
  sequence: number;
  /** Not delivered before this (epoch ms). */
  visibleAt: number;
}

/**
 * The messages that may be delivered at `now`, in order: on a FIFO queue each group's oldest message, if it
 * is visible; on a standard queue every visible one.
 */
export function deliverable<M extends QueuedMessage>(messages: readonly M[], now: number): M[] {
  const ordered = [...messages].sort((a, b) => a.sequence - b.sequence);
  const heads = new Set<string>();
  const out: M[] = [];
  for (const message of ordered) {
    if (message.groupId !== undefined) {
      if (heads.has(message.groupId)) continue;
      heads.add(message.groupId);
    }
    if (message.visibleAt <= now) out.push(message);
  }
  return out;
}

/** The deduplication ids sent in the last 5 minutes, and when. */
export class DeduplicationWindow {
  private readonly seen = new Map<string, number>();

  /** Whether a message with this id sent at `now` is a duplicate; notes it if it is not. */
  duplicate(id: string, now: number): boolean {
    for (const [key, at] of this.seen) if (now - at >= DEDUPLICATION_MS) this.seen.delete(key);
    if (this.seen.has(id)) return true;
    this.seen.set(id, now);
    return false;
  }

  /** The ids and when they were sent, to keep across a restart. */
  entries(): [string, number][] {
    return [...this.seen];
  }

  restore(entries: readonly [string, number][]): void {
    for (const [id, at] of entries) this.seen.set(id, at);
  }
}
