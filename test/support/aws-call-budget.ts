/**
 * The AWS calls one request of each keyed route makes, pinned: the baseline the hot path's budget (issue 24)
 * lowers. test/integration/aws-call-budget.test.ts measures them (test/support/route-calls.ts: the handlers'
 * own SDK clients against the embedded emulators) and fails when a count differs from this table, up or down,
 * so that a change that adds a call is seen, and one that saves a call lowers the pin with it. docs/deploy.md's
 * cost per million is computed from it (test/support/cost-model.ts; test/unit/cost-table.test.ts holds the
 * page to it).
 *
 * Counts are of a warm container: the key found and cached. Not in them: the key's look-up on a cold container
 * or once its cache lapses (one GetItem a container per `DRIVE_KEY_CACHE_SECONDS`), and its "last used" write
 * (one UpdateItem a container a minute). Every request's one `UpdateItem` of DynamoDB is its rate-limit bucket.
 */

/** One request: what it asks, its route (method and API Gateway resource), its answer's status, and its calls. */
export interface PinnedRequest {
  request: string;
  route: string;
  status: number;
  /** Calls by command, each counted once however many times the SDK retried it. */
  dynamodb: Record<string, number>;
  s3: Record<string, number>;
  sqs: Record<string, number>;
  /**
   * The longest chain of calls each made after the one before it answered: the calls on the request's critical
   * path one after another (calls made together, as by Promise.all, count once). At most the total.
   */
  sequential: number;
  /**
   * Two chains of its calls run side by side (files copied or stored in parallel): which answers first, the
   * machine's speed, decides how deep its later calls count, so `sequential` is what one run measured, shown
   * and priced but not held to. Which requests do this is pinned.
   */
  sideBySide?: true;
  /** DynamoDB's read and write request units (on demand), from the items the calls read and wrote. */
  rru: number;
  wru: number;
}

/** What one request made, as measured: calls by command, the chain's length, and the total. */
export interface CallCount {
  dynamodb: Record<string, number>;
  s3: Record<string, number>;
  sqs: Record<string, number>;
  sequential: number;
  total: number;
  rru: number;
  wru: number;
}

/** Every call the request makes, whatever the service. */
export function totalCalls(calls: Pick<PinnedRequest, 'dynamodb' | 's3' | 'sqs'>): number {
  return [calls.dynamodb, calls.s3, calls.sqs].flatMap((byCommand) => Object.values(byCommand)).reduce((a, b) => a + b, 0);
}

/** The pinned counts, in the order route-calls.ts makes the requests. */
export const PINNED_CALLS: readonly PinnedRequest[] = [
  { request: 'take a change feed cursor', route: 'GET /drive/changes/latest', status: 200, dynamodb: { Query: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 1, wru: 1 },
  { request: 'read the change feed, nothing new', route: 'GET /drive/changes', status: 200, dynamodb: { Query: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 1, wru: 1 },
  { request: "read a folder's recent changes, none yet", route: 'GET /drive/changes/recent', status: 200, dynamodb: { Query: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 1, wru: 1 },
  { request: 'upload 4 KiB into an existing folder', route: 'POST /drive/upload', status: 200, dynamodb: { BatchGetItem: 2, PutItem: 1, UpdateItem: 1 }, s3: { PutObject: 1 }, sqs: {}, sequential: 4, rru: 3, wru: 2 },
  { request: 'upload 1 MiB into an existing folder', route: 'POST /drive/upload', status: 200, dynamodb: { BatchGetItem: 2, PutItem: 1, UpdateItem: 1 }, s3: { PutObject: 1 }, sqs: {}, sequential: 4, rru: 3, wru: 2 },
  { request: 'upload 4 KiB into a folder written into in the last 30 s', route: 'POST /drive/upload', status: 200, dynamodb: { BatchGetItem: 1, PutItem: 1, UpdateItem: 1 }, s3: { PutObject: 1 }, sqs: {}, sequential: 4, rru: 1, wru: 2 },
  { request: 'upload 1 MiB into a folder written into in the last 30 s', route: 'POST /drive/upload', status: 200, dynamodb: { BatchGetItem: 1, PutItem: 1, UpdateItem: 1 }, s3: { PutObject: 1 }, sqs: {}, sequential: 4, rru: 1, wru: 2 },
  { request: 'upload 10 files of 4 KiB into an existing folder', route: 'POST /drive/upload', status: 200, dynamodb: { BatchGetItem: 2, BatchWriteItem: 1, PutItem: 11, UpdateItem: 1 }, s3: { PutObject: 10 }, sqs: {}, sequential: 9, sideBySide: true, rru: 12, wru: 13 },
  { request: 'upload 4 KiB into 3 new folders', route: 'POST /drive/upload', status: 200, dynamodb: { BatchGetItem: 2, PutItem: 1, UpdateItem: 4 }, s3: { PutObject: 1 }, sqs: {}, sequential: 7, rru: 7, wru: 5 },
  // A condition rides on the record's write: the calls of the same upload without one (replacing). With the trash
  // on (issue 28, as route-calls.ts sets it) the old version becomes a trash row and its due entry in one TransactWriteItems
  // where its bytes were deleted (DeleteObjects): the same 6 calls, 5 sequential; 4 WRU more (2 items, transactional).
  { request: 'upload 4 KiB with if_match, replacing', route: 'POST /drive/upload', status: 200, dynamodb: { BatchGetItem: 1, PutItem: 1, TransactWriteItems: 1, UpdateItem: 1 }, s3: { PutObject: 1 }, sqs: {}, sequential: 5, rru: 1, wru: 6 },
  { request: 'upload 4 KiB with if_none_match, new', route: 'POST /drive/upload', status: 200, dynamodb: { BatchGetItem: 1, PutItem: 1, UpdateItem: 1 }, s3: { PutObject: 1 }, sqs: {}, sequential: 4, rru: 1, wru: 2 },
  // Refused on the read: no record written; its bytes deleted, the folders read again by the withdrawal.
  { request: 'upload 4 KiB with a stale if_match', route: 'POST /drive/upload', status: 412, dynamodb: { BatchGetItem: 1, PutItem: 1, UpdateItem: 1 }, s3: { DeleteObjects: 1, PutObject: 1 }, sqs: {}, sequential: 5, rru: 2, wru: 2 },
  { request: 'download 4 KiB', route: 'GET /drive/download', status: 200, dynamodb: { BatchGetItem: 1, UpdateItem: 1 }, s3: { GetObject: 1 }, sqs: {}, sequential: 3, rru: 2, wru: 1 },
  { request: 'download 1 MiB', route: 'GET /drive/download', status: 200, dynamodb: { BatchGetItem: 1, UpdateItem: 1 }, s3: { GetObject: 1 }, sqs: {}, sequential: 3, rru: 2, wru: 1 },
  { request: 'download a range', route: 'GET /drive/download', status: 206, dynamodb: { BatchGetItem: 1, UpdateItem: 1 }, s3: { GetObject: 1 }, sqs: {}, sequential: 3, rru: 2, wru: 1 },
  { request: 'download, not modified', route: 'GET /drive/download', status: 304, dynamodb: { BatchGetItem: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 2, wru: 1 },
  { request: 'HEAD a file', route: 'HEAD /drive/download', status: 200, dynamodb: { BatchGetItem: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 2, wru: 1 },
  { request: 'download 1 MiB above redirect_above', route: 'GET /drive/download', status: 307, dynamodb: { BatchGetItem: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 2, wru: 1 },
  { request: 'download 4 KiB at redirect_above', route: 'GET /drive/download', status: 200, dynamodb: { BatchGetItem: 1, UpdateItem: 1 }, s3: { GetObject: 1 }, sqs: {}, sequential: 3, rru: 2, wru: 1 },
  { request: 'list a folder of 10 files', route: 'GET /drive/list', status: 200, dynamodb: { GetItem: 1, Query: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 2, wru: 1 },
  { request: 'list a folder of 400 files', route: 'GET /drive/list', status: 200, dynamodb: { GetItem: 1, Query: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 32, wru: 1 },
  { request: 'list recursive, 4 files in 2 folders', route: 'GET /drive/list', status: 200, dynamodb: { GetItem: 1, Query: 3, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 3, rru: 4, wru: 1 },
  { request: 'create a folder', route: 'POST /drive/folders', status: 200, dynamodb: { BatchGetItem: 1, UpdateItem: 2 }, s3: {}, sqs: {}, sequential: 3, rru: 1, wru: 2 },
  { request: 'create a 3-deep folder', route: 'POST /drive/folders', status: 200, dynamodb: { BatchGetItem: 2, UpdateItem: 4 }, s3: {}, sqs: {}, sequential: 6, rru: 5, wru: 4 },
  { request: 'create a folder that exists', route: 'POST /drive/folders', status: 200, dynamodb: { BatchGetItem: 1, UpdateItem: 2 }, s3: {}, sqs: {}, sequential: 3, rru: 1, wru: 2 },
  // With the trash on: the records become rows and due entries in the one transaction; no DeleteObjects, no journal close.
  { request: 'delete 3 files', route: 'DELETE /drive/files', status: 200, dynamodb: { BatchGetItem: 1, TransactWriteItems: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 3, rru: 4, wru: 25 },
  // With the trash on: the folder's row (PutItem) before the mark, the files into it (TransactWriteItems), its
  // members counted (Query) and the row filled with its due entry (TransactWriteItems); no DeleteObjects.
  { request: 'delete a folder of 2 files', route: 'DELETE /drive/folders', status: 200, dynamodb: { DeleteItem: 1, GetItem: 2, PutItem: 2, Query: 3, TransactWriteItems: 2, UpdateItem: 6 }, s3: {}, sqs: {}, sequential: 16, rru: 5, wru: 27 },
  { request: 'delete an empty folder', route: 'DELETE /drive/folders', status: 200, dynamodb: { DeleteItem: 1, GetItem: 1, PutItem: 1, Query: 1, UpdateItem: 3 }, s3: {}, sqs: {}, sequential: 7, rru: 2, wru: 5 },
  { request: 'move a file', route: 'POST /drive/move', status: 200, dynamodb: { BatchGetItem: 3, TransactWriteItems: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 5, rru: 7, wru: 9 },
  { request: 'move a folder (handed to a job)', route: 'POST /drive/move', status: 202, dynamodb: { BatchGetItem: 1, PutItem: 2, UpdateItem: 5 }, s3: {}, sqs: { SendMessage: 1 }, sequential: 9, rru: 2, wru: 7 },
  { request: 'read a job', route: 'GET /drive/jobs/{job_id}', status: 200, dynamodb: { GetItem: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 1, wru: 1 },
  { request: 'copy a file', route: 'POST /drive/copy', status: 200, dynamodb: { BatchGetItem: 4, BatchWriteItem: 1, PutItem: 2, UpdateItem: 1 }, s3: { CopyObject: 1 }, sqs: {}, sequential: 9, rru: 9, wru: 4 },
  { request: 'copy a folder of 2 files', route: 'POST /drive/copy', status: 200, dynamodb: { BatchGetItem: 7, BatchWriteItem: 1, GetItem: 2, PutItem: 4, Query: 1, UpdateItem: 6 }, s3: { CopyObject: 2 }, sqs: {}, sequential: 18, sideBySide: true, rru: 14, wru: 11 },
  { request: 'whoami', route: 'GET /drive/whoami', status: 200, dynamodb: { UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 1, rru: 0, wru: 1 },
  // The trash (issue 28): a page is one Query of the rows (the usage summed from it); a restore is a writer of one
  // file (row, folders above and destination, one transaction, folders again); a purge claims the row (GetItem,
  // UpdateItem, the due entry PutItem), deletes the bytes, reads the members (none) and removes the row.
  { request: 'list the trash, one page', route: 'GET /drive/trash', status: 200, dynamodb: { Query: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 1, wru: 1 },
  { request: 'restore a file', route: 'POST /drive/trash/restore', status: 200, dynamodb: { BatchGetItem: 3, GetItem: 1, TransactWriteItems: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 6, rru: 5, wru: 9 },
  { request: 'purge a file', route: 'DELETE /drive/trash/{item_id}', status: 200, dynamodb: { GetItem: 3, PutItem: 1, Query: 1, TransactWriteItems: 1, UpdateItem: 2 }, s3: { DeleteObjects: 1 }, sqs: {}, sequential: 9, rru: 4, wru: 7 },
  { request: 'empty the trash of a folder', route: 'DELETE /drive/trash', status: 200, dynamodb: { GetItem: 2, PutItem: 1, Query: 2, TransactWriteItems: 1, UpdateItem: 2 }, s3: { DeleteObjects: 1 }, sqs: {}, sequential: 9, rru: 4, wru: 7 },
  // With an Idempotency-Key (issue 26): +2 UpdateItem, +1 sequential. The key is taken beside the rate-limit
  // bucket (one depth, no call added before the handler) and the answer kept after it (the one added depth).
  // A replay is the refused take, which returns the record, beside the bucket: one depth, no handler.
  { request: 'upload 4 KiB with an Idempotency-Key', route: 'POST /drive/upload', status: 200, dynamodb: { BatchGetItem: 2, PutItem: 1, UpdateItem: 3 }, s3: { PutObject: 1 }, sqs: {}, sequential: 5, rru: 3, wru: 4 },
  { request: 'upload 4 KiB with an Idempotency-Key, replayed', route: 'POST /drive/upload', status: 200, dynamodb: { UpdateItem: 2 }, s3: {}, sqs: {}, sequential: 1, rru: 0, wru: 2 },
  { request: 'create a folder with an Idempotency-Key', route: 'POST /drive/folders', status: 200, dynamodb: { BatchGetItem: 1, UpdateItem: 4 }, s3: {}, sqs: {}, sequential: 4, rru: 1, wru: 4 },
  { request: 'large upload: start', route: 'POST /drive/uploads', status: 200, dynamodb: { GetItem: 2, PutItem: 1, UpdateItem: 1 }, s3: { CreateMultipartUpload: 1 }, sqs: {}, sequential: 5, rru: 2, wru: 2 },
  { request: 'large upload: part URLs', route: 'GET /drive/uploads/{upload_id}/parts', status: 200, dynamodb: { GetItem: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 1, wru: 1 },
  { request: 'large upload: complete', route: 'POST /drive/uploads/{upload_id}/complete', status: 200, dynamodb: { BatchGetItem: 2, DeleteItem: 1, GetItem: 3, PutItem: 1, UpdateItem: 4 }, s3: { CompleteMultipartUpload: 1, HeadObject: 1, ListParts: 1 }, sqs: {}, sequential: 13, rru: 6, wru: 6 },
  { request: 'large upload: abort', route: 'DELETE /drive/uploads/{upload_id}', status: 200, dynamodb: { DeleteItem: 1, GetItem: 1, UpdateItem: 2 }, s3: { AbortMultipartUpload: 1 }, sqs: {}, sequential: 5, rru: 1, wru: 3 },
  { request: 'create a share link', route: 'POST /drive/links', status: 200, dynamodb: { BatchGetItem: 1, PutItem: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 3, rru: 2, wru: 2 },
  { request: 'list share links', route: 'GET /drive/links', status: 200, dynamodb: { BatchGetItem: 1, Query: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 3, rru: 1.5, wru: 1 },
  { request: 'open a share link', route: 'GET /s/{token}', status: 200, dynamodb: { BatchGetItem: 1, GetItem: 2, UpdateItem: 1 }, s3: { GetObject: 1 }, sqs: {}, sequential: 5, rru: 4, wru: 1 },
  { request: 'HEAD a share link', route: 'HEAD /s/{token}', status: 200, dynamodb: { BatchGetItem: 1, GetItem: 2, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 4, rru: 4, wru: 1 },
  { request: 'revoke a share link', route: 'DELETE /drive/links/{link_id}', status: 200, dynamodb: { DeleteItem: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 0, wru: 2 },
  { request: 'revoke the share links a key made (a page)', route: 'DELETE /drive/links', status: 200, dynamodb: { DeleteItem: 1, Query: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 3, rru: 0.5, wru: 2 },
  { request: 'list keys', route: 'GET /drive/keys', status: 200, dynamodb: { Query: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 0.5, wru: 1 },
  { request: 'create a key', route: 'POST /drive/keys', status: 200, dynamodb: { PutItem: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 0, wru: 2 },
  { request: 'revoke a key', route: 'DELETE /drive/keys/{key_id}', status: 200, dynamodb: { Query: 1, UpdateItem: 2 }, s3: {}, sqs: {}, sequential: 3, rru: 0.5, wru: 2 },
  { request: 'register a webhook', route: 'POST /drive/webhooks', status: 200, dynamodb: { Query: 1, TransactWriteItems: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 3, rru: 1, wru: 7 },
  { request: 'list webhooks', route: 'GET /drive/webhooks', status: 200, dynamodb: { Query: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 1, wru: 1 },
  { request: "list a webhook's failed deliveries", route: 'GET /drive/webhooks/{webhook_id}/deliveries', status: 200, dynamodb: { GetItem: 1, Query: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 3, rru: 2, wru: 1 },
  { request: 'delete a webhook', route: 'DELETE /drive/webhooks/{webhook_id}', status: 200, dynamodb: { Query: 1, TransactWriteItems: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 3, rru: 0.5, wru: 5 },
  // The drive's rules are one item: read, then written whole on its version.
  { request: 'create a trust rule', route: 'POST /drive/trust', status: 200, dynamodb: { GetItem: 1, PutItem: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 3, rru: 1, wru: 2 },
  { request: 'list trust rules', route: 'GET /drive/trust', status: 200, dynamodb: { GetItem: 1, UpdateItem: 1 }, s3: {}, sqs: {}, sequential: 2, rru: 1, wru: 1 },
  // Keyless: the rules read, the drive's and the address's buckets, the key stored, the rule read again (a revoke racing it).
  { request: 'exchange a token (issuer keys cached)', route: 'POST /drive/token', status: 200, dynamodb: { GetItem: 2, PutItem: 1, UpdateItem: 2 }, s3: {}, sqs: {}, sequential: 5, rru: 2, wru: 3 },
  // The rule marked, then its keys found in the keys-by-drive index and revoked, one update each.
  { request: 'revoke a trust rule and its 2 keys', route: 'DELETE /drive/trust/{trust_id}', status: 200, dynamodb: { GetItem: 1, PutItem: 1, Query: 1, UpdateItem: 3 }, s3: {}, sqs: {}, sequential: 5, rru: 1.5, wru: 4 },
];

/** The pinned request named `request` (throws on a name the table lacks). */
export function pinned(request: string): PinnedRequest {
  const found = PINNED_CALLS.find((row) => row.request === request);
  if (!found) throw new Error(`no pinned request "${request}"`);
  return found;
}
