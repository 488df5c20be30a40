import { randomBytes } from 'node:crypto';
import { type Caller, confine } from './access';
import { type Resolve, RefusedAddressError, checkedAddress, webhookUrlProblem } from './address-guard';
import { CHANGE_TYPES, type Change, type ChangeSource, type ChangeType, inScope } from './change-source';
import { invalid } from './errors';
import { ROOT } from './paths';
import { signatureHeader } from './webhook-signature';

/**
 * Webhooks (issue 27; docs/change-feed-design.md, "Webhooks"): each a follower of the drive's log, scoped by
 * `path` and `types`. The dispatcher reads the log from its own stored position and queues one delivery per
 * matching change on a FIFO queue, one message group per webhook; the worker POSTs each, signed, and retries
 * with exponential backoff for 24 hours before it writes the delivery off as failed.
 */

/** A webhook as stored: its secret is kept (signing needs it) and shown only in the answer that made it. */
export interface WebhookRecord {
  id: string;
  drive: string;
  url: string;
  /** The subtree it follows (`/` for the whole drive). */
  path: string;
  /** The kinds of change it is sent; all seven when it was made without `types`. */
  types: ChangeType[];
  secret: string;
  createdAt: string;
  /** The log's last position when it was made: it is sent the changes after it only. */
  since: number;
}

/** A delivery written off: its change was not acknowledged within the retry period. */
export interface FailedDelivery {
  /** The delivery's id, `<webhook id>.<change id>` (the `Drive-Delivery-Id` of each attempt). */
  id: string;
  webhookId: string;
  /** The change's position in the log. */
  position: number;
  change: Change;
  attempts: number;
  /** The last attempt's HTTP status, or undefined when it got none (a refused address, a timeout, a reset). */
  lastStatus?: number;
  /** What went wrong with the last attempt, in a line. */
  lastError: string;
  firstAttemptAt: string;
  failedAt: string;
}

/** The webhooks of each drive, the dispatcher's position in its log, and the failed deliveries. */
export interface WebhookStore {
  /**
   * Stores a new webhook (its id is fresh: no condition beyond it not being there) and notes its drive among
   * those with webhooks, only if the drive has fewer than `max` webhooks: the count and the check one atomic
   * step, so that registrations racing for the last place cannot both store. False when the drive has `max`.
   */
  create(record: WebhookRecord, max: number): Promise<boolean>;
  /** The drives that have had a webhook: what the dispatcher's schedule follows when no nudge names a drive. */
  drives(): Promise<string[]>;
  /** The drive's webhooks, oldest first. */
  list(drive: string): Promise<WebhookRecord[]>;
  /** One webhook of the drive, or undefined. */
  get(drive: string, id: string): Promise<WebhookRecord | undefined>;
  /** Deletes the webhook (and its failed deliveries), its drive's count with it; false if the drive had none by that id. */
  remove(drive: string, id: string): Promise<boolean>;
  /** The last log position the dispatcher queued deliveries for, or undefined if it never ran on the drive. */
  position(drive: string): Promise<number | undefined>;
  /**
   * Moves the dispatcher's position from `from` (undefined: never set) to `to`, only if it is still `from`;
   * false when another dispatcher moved it meanwhile.
   */
  advance(drive: string, from: number | undefined, to: number): Promise<boolean>;
  /** Keeps a failed delivery (as long as the feed keeps its changes). */
  fail(drive: string, failure: FailedDelivery): Promise<void>;
  /** The webhook's failed deliveries, oldest change first, up to `limit`. */
  failures(drive: string, webhookId: string, limit: number): Promise<FailedDelivery[]>;
}

/** One delivery as the queue carries it: a change, already scoped to its webhook, and the cursor past it. */
export interface DeliveryMessage {
  drive: string;
  webhookId: string;
  position: number;
  change: Change;
  cursor: string;
}

/** The id of a delivery: the same for every attempt, and the FIFO queue's deduplication id. */
export const deliveryId = (message: Pick<DeliveryMessage, 'webhookId' | 'change'>) => `${message.webhookId}.${message.change.id}`;

/** The deliveries queue: SQS FIFO in the stack, `MessageGroupId` the webhook's id, `MessageDeduplicationId` the delivery's. */
export interface DeliveryQueue {
  /** Queues the messages, in order; a message sent again within 5 minutes under the same delivery id is dropped. */
  send(messages: readonly DeliveryMessage[]): Promise<void>;
}

/** The webhook as the API shows it: never its secret. */
export function webhookView(record: WebhookRecord) {
  return { id: record.id, url: record.url, path: record.path, types: record.types, created_at: record.createdAt };
}

/** A failed delivery as `GET /drive/webhooks/{id}/deliveries` lists it. */
export function deliveryView(failure: FailedDelivery) {
  return {
    id: failure.id,
    webhook_id: failure.webhookId,
    status: 'failed' as const,
    change: failure.change,
    attempts: failure.attempts,
    last_status: failure.lastStatus ?? null,
    last_error: failure.lastError,
    first_attempt_at: failure.firstAttemptAt,
    failed_at: failure.failedAt,
  };
}

/** A webhook's id: 16 hex digits, as a key's. */
export const WEBHOOK_ID = /^[0-9a-f]{16}$/;

/** The most webhooks a drive may have: each is a message group and a scan of every change. */
export const MAX_WEBHOOKS_PER_DRIVE = 20;

export interface NewWebhook {
  url: string;
  path: string;
  types?: readonly ChangeType[];
}

/**
 * Makes a webhook for the caller's drive: the URL checked (https; its host resolved now and refused if any
 * address is private, loopback or link-local), `path` within the caller's prefix, `types` among the seven.
 * Answers the record, whose secret (`whsec_` + 32 random bytes) the route shows this once.
 */
export async function registerWebhook(
  ports: { store: WebhookStore; source: ChangeSource; resolve: Resolve },
  caller: Pick<Caller, 'drive' | 'prefix'>,
  input: NewWebhook,
  options: { now: Date; allowLoopback: boolean },
): Promise<WebhookRecord> {
  const problem = webhookUrlProblem(input.url, options.allowLoopback);
  if (problem) throw invalid(problem);
  confine(caller, input.path, 'path');
  const types = input.types === undefined ? [...CHANGE_TYPES] : CHANGE_TYPES.filter((type) => input.types!.includes(type));
  if (types.length === 0) throw invalid(`types must name at least one of ${CHANGE_TYPES.join(', ')}`);
  try {
    await checkedAddress(new URL(input.url), ports.resolve, options.allowLoopback);
  } catch (error) {
    if (error instanceof RefusedAddressError) throw invalid(`url is refused: ${error.message}`);
    throw invalid(`url's host ${new URL(input.url).hostname} could not be resolved`);
  }
  const record: WebhookRecord = {
    id: randomBytes(8).toString('hex'),
    drive: caller.drive,
    url: input.url,
    path: input.path,
    types,
    secret: `whsec_${randomBytes(32).toString('base64url')}`,
    createdAt: options.now.toISOString(),
    since: await ports.source.head(caller.drive),
  };
  if (!(await ports.store.create(record, MAX_WEBHOOKS_PER_DRIVE))) throw invalid(`a drive may have at most ${MAX_WEBHOOKS_PER_DRIVE} webhooks; delete one first`);
  return record;
}

/** The changes one dispatcher read takes from the log, and the most it queues per call. */
const DISPATCH_PAGE = 100;

/**
 * Follows the drive's log from the dispatcher's stored position: each change, scoped to each webhook that
 * takes it, is queued as a delivery, then the position advanced (conditionally: a dispatcher running beside
 * this one stops here). One that dies between the two queues the same deliveries again, which the FIFO queue
 * drops by their ids. Stops at the log's end or after `maxPages` reads; answers how many it queued.
 */
export async function dispatch(
  ports: { source: ChangeSource; store: WebhookStore; queue: DeliveryQueue },
  drive: string,
  options: { now: Date; maxPages?: number },
): Promise<number> {
  let hooks = await ports.store.list(drive);
  if (hooks.length === 0) return 0;
  const stored = await ports.store.position(drive);
  // A drive's first dispatch starts where its oldest webhook began: nothing before it was asked for.
  let position = stored ?? Math.min(...hooks.map((hook) => hook.since));
  let last = stored;
  let queued = 0;
  for (let page = 0; page < (options.maxPages ?? 10); page++) {
    const read = await ports.source.read(drive, position, DISPATCH_PAGE);
    if (read.position <= position) break;
    // The webhooks listed again after the read: one made before it (its `since` below the page's end) is in
    // this list and gets its changes; one made after it has a `since` at or past what the read saw.
    hooks = await ports.store.list(drive);
    const messages: DeliveryMessage[] = [];
    for (const change of read.changes) {
      const at = Number(change.id);
      for (const hook of hooks) {
        if (at <= hook.since) continue;
        const scoped = inScope(change, hook.path);
        if (!scoped || !hook.types.includes(scoped.type)) continue;
        messages.push({ drive, webhookId: hook.id, position: at, change: scoped, cursor: ports.source.cursor(drive, hook.path, at, options.now) });
      }
    }
    if (messages.length > 0) await ports.queue.send(messages);
    if (!(await ports.store.advance(drive, last, read.position))) return queued;
    queued += messages.length;
    last = position = read.position;
  }
  return queued;
}

/** How a delivery's attempts are spaced and how long they go on (`webhookRetryBaseMs`, `webhookRetryForSeconds`). */
export interface RetryPolicy {
  /** The wait after the first failure; each next one three times the last, up to `capMs`. */
  baseMs: number;
  capMs: number;
  /** A delivery that fails this long after it was queued is written off. */
  forMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 10_000, capMs: 2 * 60 * 60 * 1000, forMs: 24 * 60 * 60 * 1000 };

/** The wait before attempt `attempts + 1`, after `attempts` failures: 10 s, 30 s, 90 s, 4.5 min, … capped at 2 h. */
export function backoffMs(policy: RetryPolicy, attempts: number): number {
  return Math.min(policy.capMs, policy.baseMs * 3 ** Math.max(0, attempts - 1));
}

/** What one POST to a receiver came to: its status, or why there was none. */
export type PostOutcome = { status: number } | { error: string };

/** Sends one delivery: POSTs `body` with `headers` to `url`, within `timeoutMs`, to an address the guard allowed. */
export type PostDelivery = (url: string, body: string, headers: Record<string, string>, timeoutMs: number) => Promise<PostOutcome>;

/** How long a receiver has to acknowledge. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** One attempt, as the queue's record tells it (SQS's `ApproximateReceiveCount`, `ApproximateFirstReceiveTimestamp`, `SentTimestamp`). */
export interface Attempt {
  /** 1 for the first attempt. */
  number: number;
  firstAt: Date;
  /**
   * When the delivery was queued: the retry period counts from it, so that the deliveries waiting in a group
   * behind one being retried are not each given their own 24 hours (the queue would drop them first).
   * Undefined: from the first attempt.
   */
  queuedAt?: Date;
  now: Date;
}

/**
 * What the worker does with a message after an attempt: `done` deletes it (acknowledged, written off, or its
 * webhook gone); `retry` hides it for `afterMs` (`ChangeMessageVisibility`) and reports it failed, so its
 * group waits.
 */
export type AttemptResult = { kind: 'delivered' } | { kind: 'dropped' } | { kind: 'failed' } | { kind: 'retry'; afterMs: number; reason: string };

/**
 * Attempts one delivery: signed anew (`Drive-Signature` at this attempt's time), POSTed; a 2xx acknowledges.
 * Anything else is retried after the policy's backoff, until an attempt made `forMs` after the delivery was
 * queued (or, not knowing that, after the first attempt) fails:
 * then the delivery is written off as failed (listed by `GET /drive/webhooks/{id}/deliveries?status=failed`).
 */
export async function attemptDelivery(
  ports: { store: WebhookStore; post: PostDelivery },
  message: DeliveryMessage,
  attempt: Attempt,
  policy: RetryPolicy = DEFAULT_RETRY,
): Promise<AttemptResult> {
  const hook = await ports.store.get(message.drive, message.webhookId);
  if (!hook) return { kind: 'dropped' };
  const id = deliveryId(message);
  const body = JSON.stringify({ id, webhook_id: hook.id, change: message.change, cursor: message.cursor });
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': 'Drive-Webhooks/1',
    'Drive-Webhook-Id': hook.id,
    'Drive-Delivery-Id': id,
    'Drive-Signature': signatureHeader(hook.secret, body, Math.floor(attempt.now.getTime() / 1000)),
  };
  const outcome = await ports.post(hook.url, body, headers, DELIVERY_TIMEOUT_MS);
  if ('status' in outcome && outcome.status >= 200 && outcome.status < 300) return { kind: 'delivered' };
  const reason = 'status' in outcome ? `answered ${outcome.status}` : outcome.error;
  if (attempt.now.getTime() - (attempt.queuedAt ?? attempt.firstAt).getTime() >= policy.forMs) {
    await ports.store.fail(message.drive, {
      id,
      webhookId: hook.id,
      position: message.position,
      change: message.change,
      attempts: attempt.number,
      ...('status' in outcome ? { lastStatus: outcome.status } : {}),
      lastError: reason,
      firstAttemptAt: attempt.firstAt.toISOString(),
      failedAt: attempt.now.toISOString(),
    });
    return { kind: 'failed' };
  }
  return { kind: 'retry', afterMs: backoffMs(policy, attempt.number), reason };
}

/** The default `path` of a webhook made without one: the whole drive. */
export const WHOLE_DRIVE = ROOT;
