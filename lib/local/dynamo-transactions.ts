import { randomUUID } from 'node:crypto';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { batchGet } from './dynamo-batch-get';
import type { StreamTap } from './dynamo-stream';
import type { EmbeddedDynalite } from './embedded-dynalite';

/**
 * DynamoDB's `TransactWriteItems`, which dynalite lacks, made of its single-item writes: all of a
 * transaction's writes apply, or none does, and no other request sees the ones in between.
 *
 * - Isolation: every other request to the emulator holds a shared lock while it runs; a transaction holds it
 *   alone (`SharedLock`), so it runs between requests, never beside one.
 * - Conditions: each write goes to dynalite with its own condition, in order. The first refused one undoes
 *   the writes before it (from the images read at the start), and every condition is then checked against
 *   the state the transaction began on, so `CancellationReasons` names each item's outcome, as AWS does.
 *   A `ConditionCheck` is checked as a conditional delete whose item is then put back.
 * - Crashes: the images are written to a file in `walDir` before the first write and removed after the last.
 *   A host killed in between leaves the file, and `recoverTransactions` puts the images back when the
 *   emulator starts again: the transaction did not happen, as its caller (whose connection died with the
 *   host) cannot tell from its not happening.
 *
 * - Idempotency: a `ClientRequestToken` that made a transaction in the last 10 minutes is answered as that
 *   transaction was, without making it again (a different request under the same token is refused), as in
 *   AWS. The SDK sends one with every transaction and keeps it across retries.
 *
 * - `TransactGetItems`, which dynalite lacks too, reads its items under the exclusive lock: no write runs
 *   between the first read and the last.
 * - `ReturnValuesOnConditionCheckFailure: ALL_OLD` on PutItem, UpdateItem and DeleteItem, which dynalite
 *   ignores: a refused write's item is read under the exclusive lock and returned with the refusal.
 * - `BatchGetItem` answers up to AWS's 16 MB, where dynalite stops at 1.4 MB (lib/local/dynamo-batch-get.ts).
 *
 * - Streams (`tap`): each write that changed an item of a streamed table is appended to its stream with the
 *   item's old and new images (lib/local/dynamo-stream.ts), in the order of the item's writes: a single-item
 *   write holds a lock on its key from its read of the old image to its record's append, a batch write and a
 *   transaction the exclusive lock. A refused write or one that changes nothing appends nothing, as in AWS.
 *
 * Not emulated: `ReturnConsumedCapacity`, and the 4 MB size limit.
 */
export interface Transactions {
  /** Runs `work` (any other request) under the shared lock. */
  shared<T>(work: () => Promise<T>): Promise<T>;
  /**
   * The answer to a request of `action` that this layer makes itself (`TransactWriteItems`, `TransactGetItems`,
   * `BatchGetItem`, and a single-item write asking for the item its condition failed on), or undefined:
   * dynalite answers it.
   */
  answer(action: string, body: Buffer, headers: Record<string, string>): Promise<Answer> | undefined;
  /** The answer to a `TransactWriteItems` request `body`. */
  transactWrite(body: Buffer, headers: Record<string, string>): Promise<Answer>;
}

/** The single-item writes that take `ReturnValuesOnConditionCheckFailure`, which dynalite ignores. */
const CONDITIONAL_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);

/** An answer to send back as it is. */
export interface Answer {
  status: number;
  body: string;
  errorType?: string;
}


/** A transaction's most items, as in AWS. */
const MAX_ITEMS = 100;
/** A `ClientRequestToken`'s most characters, as in AWS (the SDK's own are UUIDs, 36). */
const TOKEN_LENGTH = 36;
/** How long AWS remembers a transaction's `ClientRequestToken`. */
const TOKEN_MS = 10 * 60_000;

type Attributes = Record<string, unknown>;

interface TransactItem {
  ConditionCheck?: Operation;
  Put?: Operation & { Item: Attributes };
  Delete?: Operation;
  Update?: Operation & { UpdateExpression: string };
}

interface Operation {
  TableName: string;
  Key?: Attributes;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Attributes;
  ReturnValuesOnConditionCheckFailure?: 'ALL_OLD' | 'NONE';
}

/** One item's state before the transaction: what to put back (or delete, if it was absent). */
interface Image {
  table: string;
  key: Attributes;
  before?: Attributes;
}

export function dynamoTransactions(dynalite: EmbeddedDynalite, walDir: string, tap?: StreamTap): Transactions {
  const lock = new SharedLock();
  const keyLocks = new KeyLocks();
  const call = caller(dynalite);
  const keyNames = new Map<string, string[]>();
  /** The transactions made in the last `TOKEN_MS`, by token: their request, without the token. */
  const made = new Map<string, { request: string; at: number }>();

  const keyOf = async (table: string, item: Attributes, headers: Record<string, string>): Promise<Attributes> => {
    let names = keyNames.get(table);
    if (!names) {
      const described = await call('DescribeTable', { TableName: table }, headers);
      if (described.status !== 200) throw new Refused(described);
      names = (described.json.Table as { KeySchema: { AttributeName: string }[] }).KeySchema.map((key) => key.AttributeName);
      keyNames.set(table, names);
    }
    return Object.fromEntries(names.map((name) => [name, item[name]]));
  };

  /**
   * TransactGetItems, which dynalite lacks: every item read while no write runs (the exclusive lock), one
   * answer per item in order, `{}` for a missing one.
   */
  const transactGet = (body: Buffer, headers: Record<string, string>) =>
    lock.exclusive(async (): Promise<Answer> => {
      const parsed = parseObject(body);
      if ('refused' in parsed) return parsed.refused;
      const items = parsed.input.TransactItems;
      if (!Array.isArray(items) || items.length < 1 || items.length > MAX_ITEMS) {
        return error('ValidationException', `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length between 1 and ${MAX_ITEMS}`);
      }
      const gets = items.map((item: { Get?: GetOperation } | null) => (item !== null && typeof item === 'object' ? item.Get : undefined));
      if (gets.some((get) => get === null || typeof get !== 'object' || typeof get.TableName !== 'string' || get.Key === null || typeof get.Key !== 'object')) {
        return error('ValidationException', 'each TransactItem must hold a Get with a TableName and a Key');
      }
      try {
        const keys = await Promise.all((gets as GetOperation[]).map((get) => keyOf(get.TableName, get.Key, headers)));
        const ids = keys.map((key, i) => `${(gets as GetOperation[])[i].TableName}\u0000${JSON.stringify(key)}`);
        if (new Set(ids).size !== ids.length) return error('ValidationException', 'Transaction request cannot include multiple operations on one item');
        const responses: { Item?: Attributes }[] = [];
        for (const { TableName, Key, ProjectionExpression, ExpressionAttributeNames } of gets as GetOperation[]) {
          const read = await call('GetItem', { TableName, Key, ConsistentRead: true, ProjectionExpression, ExpressionAttributeNames }, headers);
          if (read.status !== 200) throw new Refused(read);
          responses.push(read.json.Item ? { Item: read.json.Item as Attributes } : {});
        }
        return { status: 200, body: JSON.stringify({ Responses: responses }) };
      } catch (thrown) {
        if (thrown instanceof Refused) return refusedAnswer(thrown.reply);
        throw thrown;
      }
    });

  /**
   * A PutItem, UpdateItem or DeleteItem with `ReturnValuesOnConditionCheckFailure: ALL_OLD`: dynalite makes
   * the write, and a refusal gets the item as it stood (`Item`), as AWS gives it. Under the exclusive lock, so
   * that the item read after the refusal is the one the condition was checked on.
   */
  const conditionalWrite = (action: string, body: Buffer, headers: Record<string, string>) =>
    lock.exclusive(async (): Promise<Answer> => {
      const parsed = parseObject(body);
      if ('refused' in parsed) return parsed.refused;
      const { ReturnValuesOnConditionCheckFailure: wanted, ...write } = parsed.input as unknown as Operation & { Item?: Attributes };
      if (wanted !== undefined && wanted !== 'ALL_OLD' && wanted !== 'NONE') {
        return error('ValidationException', `1 validation error detected: Value '${String(wanted)}' at 'returnValuesOnConditionCheckFailure' failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, NONE]`);
      }
      const answer = await call(action, write, headers);
      if (answer.status === 200 || wanted !== 'ALL_OLD' || !isConditionFailure(answer)) return refusedAnswer(answer);
      try {
        const key = action === 'PutItem' ? await keyOf(write.TableName, write.Item ?? {}, headers) : write.Key;
        const read = await call('GetItem', { TableName: write.TableName, Key: key, ConsistentRead: true }, headers);
        if (read.status !== 200) throw new Refused(read);
        return { status: answer.status, errorType: String(answer.json.__type ?? ''), body: JSON.stringify({ ...answer.json, ...(read.json.Item ? { Item: read.json.Item } : {}) }) };
      } catch (thrown) {
        if (thrown instanceof Refused) return refusedAnswer(thrown.reply);
        throw thrown;
      }
    });

  /** The streamed table a request names, if any (found without parsing a body that names none). */
  const streamed = (body: Buffer): string | undefined => {
    if (!tap) return undefined;
    for (const table of tap.tables) if (body.includes(`"${table}"`)) return table;
    return undefined;
  };

  /**
   * A single-item write to a streamed table: under its key's lock, the old image read, the write made (with
   * `ReturnValuesOnConditionCheckFailure: ALL_OLD` answered from that image), the new image read, and the
   * record appended if the item changed.
   */
  const tappedWrite = (action: string, table: string, input: Record<string, unknown>, headers: Record<string, string>) =>
    lock.shared(async (): Promise<Answer> => {
      const { ReturnValuesOnConditionCheckFailure: wanted, ...write } = input as unknown as Operation & { Item?: Attributes };
      try {
        const key = await keyOf(table, action === 'PutItem' ? (write.Item ?? {}) : (write.Key ?? {}), headers);
        return await keyLocks.run(`${table}\u0000${JSON.stringify(key)}`, async () => {
          const before = await call('GetItem', { TableName: table, Key: key, ConsistentRead: true }, headers);
          if (before.status !== 200) return refusedAnswer(before);
          const answer = await call(action, write, headers);
          if (answer.status !== 200) {
            if (wanted !== 'ALL_OLD' || !isConditionFailure(answer)) return refusedAnswer(answer);
            const old = before.json.Item as Attributes | undefined;
            return { status: answer.status, errorType: String(answer.json.__type ?? ''), body: JSON.stringify({ ...answer.json, ...(old ? { Item: old } : {}) }) };
          }
          const after = await call('GetItem', { TableName: table, Key: key, ConsistentRead: true }, headers);
          if (after.status !== 200) throw new Refused(after);
          await tap!.append(table, key, before.json.Item as Attributes | undefined, after.json.Item as Attributes | undefined);
          return refusedAnswer(answer);
        });
      } catch (thrown) {
        if (thrown instanceof Refused) return refusedAnswer(thrown.reply);
        throw thrown;
      }
    });

  /** A `BatchWriteItem` naming a streamed table: under the exclusive lock, each streamed item read before and after. */
  const tappedBatch = (body: Buffer, headers: Record<string, string>) =>
    lock.exclusive(async (): Promise<Answer> => {
      const parsed = parseObject(body);
      if ('refused' in parsed) return parsed.refused;
      const requests = (parsed.input.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: Attributes }; DeleteRequest?: { Key: Attributes } }[]>;
      try {
        const touched: { table: string; key: Attributes; before?: Attributes }[] = [];
        for (const [table, writes] of Object.entries(requests)) {
          if (!tap!.tables.has(table) || !Array.isArray(writes)) continue;
          for (const write of writes) {
            const key = await keyOf(table, write.PutRequest?.Item ?? write.DeleteRequest?.Key ?? {}, headers);
            const read = await call('GetItem', { TableName: table, Key: key, ConsistentRead: true }, headers);
            if (read.status !== 200) throw new Refused(read);
            touched.push({ table, key, before: read.json.Item as Attributes | undefined });
          }
        }
        const answer = await call('BatchWriteItem', parsed.input, headers);
        if (answer.status === 200) {
          for (const { table, key, before } of touched) {
            const read = await call('GetItem', { TableName: table, Key: key, ConsistentRead: true }, headers);
            if (read.status !== 200) throw new Refused(read);
            await tap!.append(table, key, before, read.json.Item as Attributes | undefined);
          }
        }
        return refusedAnswer(answer);
      } catch (thrown) {
        if (thrown instanceof Refused) return refusedAnswer(thrown.reply);
        throw thrown;
      }
    });

  return {
    shared: (work) => lock.shared(work),
    answer(action, body, headers) {
      if (action === 'TransactWriteItems') return this.transactWrite(body, headers);
      const table = CONDITIONAL_WRITES.has(action) || action === 'BatchWriteItem' ? streamed(body) : undefined;
      if (table !== undefined && action === 'BatchWriteItem') return tappedBatch(body, headers);
      if (table !== undefined) {
        const parsed = parseObject(body);
        if ('input' in parsed && parsed.input.TableName === table) return tappedWrite(action, table, parsed.input, headers);
      }
      if (action === 'TransactGetItems') return transactGet(body, headers);
      if (action === 'BatchGetItem') return lock.shared(() => batchGet(call, body, headers));
      // Only a write that names the parameter (most do not) waits for the exclusive lock.
      if (CONDITIONAL_WRITES.has(action) && body.includes('ReturnValuesOnConditionCheckFailure')) return conditionalWrite(action, body, headers);
      return undefined;
    },
    transactWrite: (body, headers) =>
      lock.exclusive(async () => {
        let input: { TransactItems?: TransactItem[]; ClientRequestToken?: string };
        try {
          input = JSON.parse(body.toString('utf8')) as typeof input;
        } catch {
          return error('SerializationException', 'the request body is not JSON');
        }
        if (input === null || typeof input !== 'object' || Array.isArray(input)) return error('SerializationException', 'the request body must be a JSON object');
        const now = Date.now();
        for (const [held, { at }] of made) if (now - at > TOKEN_MS) made.delete(held);
        const { ClientRequestToken: token, ...request } = input;
        if (token !== undefined && (typeof token !== 'string' || token.length < 1 || token.length > TOKEN_LENGTH)) {
          return error('ValidationException', `1 validation error detected: Value '${String(token)}' at 'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to ${TOKEN_LENGTH}`);
        }
        const again = token === undefined ? undefined : made.get(token);
        if (again) {
          if (again.request !== JSON.stringify(request)) return error('IdempotentParameterMismatchException', 'the ClientRequestToken was used with another request');
          return { status: 200, body: '{}' };
        }
        const items = input.TransactItems;
        if (!Array.isArray(items) || items.length < 1 || items.length > MAX_ITEMS) {
          return error('ValidationException', `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length between 1 and ${MAX_ITEMS}`);
        }
        const ops = items.map(operationOf);
        if (ops.some((op) => op === undefined)) return error('ValidationException', 'each TransactItem must hold exactly one of ConditionCheck, Put, Delete, Update');

        try {
          // Read together (the lock keeps every other writer out), so that a transaction of many items is short.
          const images: Image[] = await Promise.all(
            (ops as Op[]).map(async (op) => {
              // In the table's own key order, whichever order the caller wrote it in: an item named twice is found.
              const key = await keyOf(op.input.TableName, op.kind === 'Put' ? op.input.Item : (op.input.Key ?? {}), headers);
              const read = await call('GetItem', { TableName: op.input.TableName, Key: key, ConsistentRead: true }, headers);
              if (read.status !== 200) throw new Refused(read);
              return { table: op.input.TableName, key, before: read.json.Item as Attributes | undefined };
            }),
          );
          const ids = images.map((image) => `${image.table}\u0000${JSON.stringify(image.key)}`);
          if (new Set(ids).size !== ids.length) return error('ValidationException', 'Transaction request cannot include multiple operations on one item');

          const wal = join(walDir, `tx-${randomUUID()}.json`);
          await mkdir(walDir, { recursive: true });
          await writeFile(wal, JSON.stringify(images), { flush: true });
          const applied: Image[] = [];
          let failedAt = -1;
          let failure: Reply | undefined;
          try {
            for (let i = 0; i < ops.length; i++) {
              const answer = await apply(call, ops[i] as Op, headers);
              if (answer.status === 200) {
                applied.push(images[i]);
                continue;
              }
              failedAt = i;
              failure = answer;
              break;
            }
          } catch (thrown) {
            // The emulator failed mid-way: undone before the answer, so that a retry starts from the state
            // before it. If the undo fails too, the write-ahead file stays, and the next start undoes it.
            await restore(call, applied, headers);
            await rm(wal, { force: true });
            throw thrown;
          }
          // A condition check's item goes back in any case; a refused transaction's writes go back too.
          const undo = failure ? applied : images.filter((_, i) => (ops[i] as Op).kind === 'ConditionCheck');
          await restore(call, undo, headers);
          if (!failure) {
            // Each item the transaction changed, in its order, to its table's stream (still under the lock).
            if (tap) {
              for (let i = 0; i < ops.length; i++) {
                const op = ops[i] as Op;
                if (op.kind === 'ConditionCheck' || !tap.tables.has(images[i].table)) continue;
                const read = await call('GetItem', { TableName: images[i].table, Key: images[i].key, ConsistentRead: true }, headers);
                if (read.status !== 200) throw new Refused(read);
                await tap.append(images[i].table, images[i].key, images[i].before, read.json.Item as Attributes | undefined);
              }
            }
            await rm(wal, { force: true });
            if (token !== undefined) made.set(token, { request: JSON.stringify(request), at: now });
            return { status: 200, body: '{}' };
          }
          if (!isConditionFailure(failure)) {
            await rm(wal, { force: true });
            return { status: failure.status, body: failure.text, errorType: String(failure.json.__type ?? '') };
          }

          // Refused: every condition is judged against the state the transaction began on, as AWS reports them.
          // Each check is a write undone at once; the write-ahead file stays until the last, so a kill in
          // between is undone at the next start too.
          const reasons: { Code: string; Message?: string; Item?: Attributes }[] = [];
          for (let i = 0; i < ops.length; i++) {
            const op = ops[i] as Op;
            const refused = i === failedAt || (i > failedAt && op.input.ConditionExpression !== undefined && !(await holds(call, op, images[i], headers)));
            if (!refused) reasons.push({ Code: 'None' });
            else reasons.push({ Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', ...(op.input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && images[i].before ? { Item: images[i].before } : {}) });
          }
          await rm(wal, { force: true });
          return {
            status: 400,
            errorType: 'TransactionCanceledException',
            body: JSON.stringify({
              __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
              message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
              CancellationReasons: reasons,
            }),
          };
        } catch (thrown) {
          if (thrown instanceof Refused) return { status: thrown.reply.status, body: thrown.reply.text, errorType: String(thrown.reply.json.__type ?? '') };
          throw thrown;
        }
      }),
  };
}

/**
 * Puts back the images of transactions a killed host left half-applied (see `dynamoTransactions`), before
 * the emulator serves any request.
 */
export async function recoverTransactions(dynalite: EmbeddedDynalite, walDir: string): Promise<number> {
  let files: string[];
  try {
    files = (await readdir(walDir)).filter((name) => name.startsWith('tx-') && name.endsWith('.json'));
  } catch {
    return 0;
  }
  const call = caller(dynalite);
  for (const name of files) {
    let images: Image[] | undefined;
    try {
      images = JSON.parse(await readFile(join(walDir, name), 'utf8')) as Image[];
    } catch {
      // Cut off while it was written: no write of its transaction had begun.
    }
    if (images) await restore(call, images, RECOVERY_HEADERS);
    await rm(join(walDir, name), { force: true });
  }
  return files.length;
}

type Op = { kind: 'ConditionCheck' | 'Delete'; input: Operation } | { kind: 'Put'; input: Operation & { Item: Attributes } } | { kind: 'Update'; input: Operation & { UpdateExpression: string } };

function operationOf(item: TransactItem): Op | undefined {
  if (item === null || typeof item !== 'object') return undefined;
  const kinds = (['ConditionCheck', 'Put', 'Delete', 'Update'] as const).filter((kind) => item[kind] !== undefined);
  if (kinds.length !== 1) return undefined;
  const kind = kinds[0];
  const input = item[kind];
  if (input === null || typeof input !== 'object' || typeof input.TableName !== 'string') return undefined;
  if (kind === 'ConditionCheck' && typeof input.ConditionExpression !== 'string') return undefined;
  const named = kind === 'Put' ? (input as { Item?: unknown }).Item : input.Key;
  if (named === null || typeof named !== 'object' || Array.isArray(named)) return undefined;
  return { kind, input } as Op;
}

/** Applies one operation as dynalite's own conditional write. */
function apply(call: Call, op: Op, headers: Record<string, string>): Promise<Reply> {
  const { ReturnValuesOnConditionCheckFailure: _, ...input } = op.input;
  switch (op.kind) {
    case 'Put':
      return call('PutItem', input, headers);
    case 'Update':
      return call('UpdateItem', input, headers);
    case 'Delete':
    case 'ConditionCheck':
      // A check is a conditional delete whose item the transaction puts back.
      return call('DeleteItem', input, headers);
  }
}

/** Whether `op`'s condition holds on the item as `image` saw it (checked by a conditional delete, then undone). */
async function holds(call: Call, op: Op, image: Image, headers: Record<string, string>): Promise<boolean> {
  const { TableName, ConditionExpression, ExpressionAttributeNames, ExpressionAttributeValues } = op.input;
  const names = ExpressionAttributeNames && usedNames(ExpressionAttributeNames, ConditionExpression ?? '');
  const values = ExpressionAttributeValues && usedNames(ExpressionAttributeValues, ConditionExpression ?? '');
  const answer = await call('DeleteItem', { TableName, Key: image.key, ConditionExpression, ExpressionAttributeNames: names, ExpressionAttributeValues: values }, headers);
  await restore(call, [image], headers);
  return answer.status === 200;
}

/** The entries of `map` that `expression` names (an update's names and values would be refused as unused). */
function usedNames<T>(map: Record<string, T>, expression: string): Record<string, T> | undefined {
  const used = Object.entries(map).filter(([name]) => new RegExp(`${name.replace(/[#:]/g, '\\$&')}(?![A-Za-z0-9_])`).test(expression));
  return used.length > 0 ? Object.fromEntries(used) : undefined;
}

/** Puts each item back as it was: its image, or nothing. */
async function restore(call: Call, images: readonly Image[], headers: Record<string, string>): Promise<void> {
  for (const image of [...images].reverse()) {
    const answer = image.before ? await call('PutItem', { TableName: image.table, Item: image.before }, headers) : await call('DeleteItem', { TableName: image.table, Key: image.key }, headers);
    if (answer.status !== 200) throw new Error(`could not undo a transaction's write to ${image.table}: ${answer.text}`);
  }
}

function isConditionFailure(reply: Reply): boolean {
  return String(reply.json.__type ?? '').endsWith('#ConditionalCheckFailedException');
}

export interface Reply {
  status: number;
  text: string;
  json: Record<string, unknown>;
}

export type Call = (action: string, input: unknown, headers: Record<string, string>) => Promise<Reply>;

/** A reply of dynalite's that ends the transaction as it is (a validation error, an unknown table). */
class Refused extends Error {
  constructor(readonly reply: Reply) {
    super(reply.text);
  }
}

/** dynalite checks an Authorization header's form, not its signature (the gateway checked the caller's). */
const RECOVERY_HEADERS = {
  authorization: 'AWS4-HMAC-SHA256 Credential=DRIVELOCAL/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=0',
  'x-amz-date': '20260101T000000Z',
};

/**
 * Calls dynalite (in this thread: lib/local/embedded-dynalite.ts) with the signing headers of the request being
 * served, as the HTTP request its server took: the input as JSON text, the answer's text and its parse.
 */
function caller(dynalite: EmbeddedDynalite): Call {
  return async (action, input, headers) => {
    const answer = await dynalite.serve({
      method: 'POST',
      url: '/',
      headers: {
        authorization: headers.authorization ?? RECOVERY_HEADERS.authorization,
        'x-amz-date': headers['x-amz-date'] ?? RECOVERY_HEADERS['x-amz-date'],
        'x-amz-target': `DynamoDB_20120810.${action}`,
        'content-type': 'application/x-amz-json-1.0',
      },
      body: Buffer.from(JSON.stringify(input)),
      internal: true,
    });
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(answer.body) as Record<string, unknown>;
    } catch {
      // An empty or non-JSON answer: its status says enough.
    }
    return { status: answer.status, text: answer.body, json };
  };
}

interface GetOperation {
  TableName: string;
  Key: Attributes;
  ProjectionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
}

/** The request body as a JSON object, or the answer refusing it. */
function parseObject(body: Buffer): { input: Record<string, unknown> } | { refused: Answer } {
  let input: unknown;
  try {
    input = JSON.parse(body.toString('utf8'));
  } catch {
    return { refused: error('SerializationException', 'the request body is not JSON') };
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return { refused: error('SerializationException', 'the request body must be a JSON object') };
  return { input: input as Record<string, unknown> };
}

/** dynalite's reply, passed on as it is. */
function refusedAnswer(reply: Reply): Answer {
  return { status: reply.status, body: reply.text, ...(reply.status === 200 ? {} : { errorType: String(reply.json.__type ?? '') }) };
}

function error(type: string, message: string): { status: number; body: string; errorType: string } {
  return { status: 400, errorType: type, body: JSON.stringify({ __type: `com.amazon.coral.validate#${type}`, message }) };
}

/** Locks by name: one holder of a name at a time, the others in turn. */
class KeyLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(name: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(name) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before.then(() => mine);
    this.tails.set(name, tail);
    await before;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(name) === tail) this.tails.delete(name);
    }
  }
}

/**
 * A readers–writer lock, first come first served: shared holders run together; an exclusive one waits for
 * them to finish, and those that come after it wait for it.
 */
export class SharedLock {
  private readers = 0;
  private writer = false;
  private readonly waiting: { exclusive: boolean; start: () => void }[] = [];

  shared<T>(work: () => Promise<T>): Promise<T> {
    return this.run(false, work);
  }

  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.run(true, work);
  }

  private async run<T>(exclusive: boolean, work: () => Promise<T>): Promise<T> {
    await new Promise<void>((start) => {
      this.waiting.push({ exclusive, start });
      this.grant();
    });
    try {
      return await work();
    } finally {
      if (exclusive) this.writer = false;
      else this.readers--;
      this.grant();
    }
  }

  private grant(): void {
    while (this.waiting.length > 0 && !this.writer) {
      const next = this.waiting[0];
      if (next.exclusive && this.readers > 0) return;
      this.waiting.shift();
      if (next.exclusive) this.writer = true;
      else this.readers++;
      next.start();
      if (next.exclusive) return;
    }
  }
}
