import { randomFillSync } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { create as createStore } from 'dynalite/db';
import { checkTypes, checkValidations } from 'dynalite/validations';
import batchGetItemAction from 'dynalite/actions/batchGetItem';
import batchGetItemValidation from 'dynalite/validations/batchGetItem';
import batchWriteItemAction from 'dynalite/actions/batchWriteItem';
import batchWriteItemValidation from 'dynalite/validations/batchWriteItem';
import createTableAction from 'dynalite/actions/createTable';
import createTableValidation from 'dynalite/validations/createTable';
import deleteItemAction from 'dynalite/actions/deleteItem';
import deleteItemValidation from 'dynalite/validations/deleteItem';
import deleteTableAction from 'dynalite/actions/deleteTable';
import deleteTableValidation from 'dynalite/validations/deleteTable';
import describeTableAction from 'dynalite/actions/describeTable';
import describeTableValidation from 'dynalite/validations/describeTable';
import describeTimeToLiveAction from 'dynalite/actions/describeTimeToLive';
import describeTimeToLiveValidation from 'dynalite/validations/describeTimeToLive';
import getItemAction from 'dynalite/actions/getItem';
import getItemValidation from 'dynalite/validations/getItem';
import listTablesAction from 'dynalite/actions/listTables';
import listTablesValidation from 'dynalite/validations/listTables';
import putItemAction from 'dynalite/actions/putItem';
import putItemValidation from 'dynalite/validations/putItem';
import queryAction from 'dynalite/actions/query';
import queryValidation from 'dynalite/validations/query';
import scanAction from 'dynalite/actions/scan';
import scanValidation from 'dynalite/validations/scan';
import tagResourceAction from 'dynalite/actions/tagResource';
import tagResourceValidation from 'dynalite/validations/tagResource';
import untagResourceAction from 'dynalite/actions/untagResource';
import untagResourceValidation from 'dynalite/validations/untagResource';
import listTagsOfResourceAction from 'dynalite/actions/listTagsOfResource';
import listTagsOfResourceValidation from 'dynalite/validations/listTagsOfResource';
import updateItemAction from 'dynalite/actions/updateItem';
import updateItemValidation from 'dynalite/validations/updateItem';
import updateTableAction from 'dynalite/actions/updateTable';
import updateTableValidation from 'dynalite/validations/updateTable';

/**
 * dynalite (the embedded DynamoDB, LevelDB under `path`) called in this thread, without its HTTP server: the
 * signing gateway (lib/local/signed-gateway.ts) and the transaction layer (lib/local/dynamo-transactions.ts)
 * hand it a request's method, target, headers and body and get back what its server would have written:
 * status, headers and body. The steps are dynalite's own `httpHandler` (its index.js) after the body is read,
 * in its order, with its actions and validations: the JSON parse, the target, the Authorization header's form,
 * `checkTypes`, `checkValidations`, the action. Only the transport is gone: before, each call was an HTTP
 * request over a unix socket (a request and a response to build and parse on both sides, in the same thread).
 *
 * Table descriptions are cached (`cacheTables`): dynalite read a table's description from LevelDB on every
 * item request (`getTable`), and tables change only by CreateTable, UpdateTable and DeleteTable.
 */
export interface EmbeddedDynalite {
  /** Answers one request as dynalite's HTTP server would. */
  serve(request: DynaliteRequest): Promise<DynaliteResponse>;
  /** Closes LevelDB once its pending operations are done. */
  close(): Promise<void>;
}

export interface DynaliteRequest {
  method: string;
  /** The path and query, as an HTTP request's `url`. */
  url: string;
  /** Header names in lower case, as Node gives them. */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /**
   * A call of the host's own (the transaction layer's), whose answer's headers nobody reads: they are not made
   * (no request id, no checksum). Its status and body are the same.
   */
  internal?: boolean;
}

export interface DynaliteResponse {
  status: number;
  /** In the order dynalite's server set them. */
  headers: [string, string][];
  body: string;
}

/** dynalite's largest request body (its index.js). */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;
const VALID_APIS = ['DynamoDB_20111205', 'DynamoDB_20120810'];

type Callback = (error: (Error & { statusCode?: number; body?: unknown }) | null, data?: unknown) => void;
type Action = (store: never, data: unknown, cb: Callback) => void;
interface ActionValidation {
  types: unknown;
  custom?: unknown;
}

/** Each operation dynalite serves, with its action and its validations (imported one by one, for the bundler). */
const OPERATIONS: Record<string, { action: Action; validation: ActionValidation }> = {
  BatchGetItem: { action: batchGetItemAction, validation: batchGetItemValidation },
  BatchWriteItem: { action: batchWriteItemAction, validation: batchWriteItemValidation },
  CreateTable: { action: createTableAction, validation: createTableValidation },
  DeleteItem: { action: deleteItemAction, validation: deleteItemValidation },
  DeleteTable: { action: deleteTableAction, validation: deleteTableValidation },
  DescribeTable: { action: describeTableAction, validation: describeTableValidation },
  DescribeTimeToLive: { action: describeTimeToLiveAction, validation: describeTimeToLiveValidation },
  GetItem: { action: getItemAction, validation: getItemValidation },
  ListTables: { action: listTablesAction, validation: listTablesValidation },
  PutItem: { action: putItemAction, validation: putItemValidation },
  Query: { action: queryAction, validation: queryValidation },
  Scan: { action: scanAction, validation: scanValidation },
  TagResource: { action: tagResourceAction, validation: tagResourceValidation },
  UntagResource: { action: untagResourceAction, validation: untagResourceValidation },
  ListTagsOfResource: { action: listTagsOfResourceAction, validation: listTagsOfResourceValidation },
  UpdateItem: { action: updateItemAction, validation: updateItemValidation },
  UpdateTable: { action: updateTableAction, validation: updateTableValidation },
};

/** The part of dynalite's store (its db/index.js `create`) this module touches. */
interface Store {
  db: {
    status: string;
    supports?: { getSync?: boolean };
    get(key: string, cb?: (error: Error | null, value?: unknown) => void): unknown;
    getSync(key: string): unknown;
  };
  tableDb: { put(key: string, value: unknown, cb: (error?: Error | null) => void): void; del(key: string, cb: (error?: Error | null) => void): void };
  getTable(name: string, checkStatus: unknown, cb?: (error: Error | null, table?: unknown) => void): void;
  lifecycleManager: { gracefulClose(cb: (error?: Error | null) => void): void };
}

/** Opens dynalite's store on `path` (in memory without one; the options are dynalite's own). */
export function embeddedDynalite(options: { path?: string; createTableMs?: number; deleteTableMs?: number; updateTableMs?: number }): EmbeddedDynalite {
  const store = createStore(options) as Store;
  cacheTables(store);
  readInThread(store);
  return {
    serve: (request) => serve(store, request),
    close: () => new Promise<void>((resolve, reject) => store.lifecycleManager.gracefulClose((error) => (error ? reject(error) : resolve()))),
  };
}

/**
 * Makes dynalite's reads (`get`: every GetItem, and the read before each PutItem, UpdateItem and DeleteItem)
 * in this thread with LevelDB's `getSync`, instead of its `get`, which hands each read to libuv's pool and
 * back: about 25 µs of CPU a read against 2. Each reads what it read before (LevelDB's `get` takes its snapshot
 * as it is called, as `getSync` reads), and the callback still comes on a later turn. Until the database is
 * open (its first requests may come while it opens) a read waits for it as before.
 */
function readInThread(store: Store): void {
  const { db } = store;
  const get = db.get;
  db.get = (key, cb) => {
    if (typeof cb !== 'function' || db.status !== 'open' || !db.supports?.getSync) return get.call(db, key, cb);
    let value: unknown;
    try {
      value = db.getSync(key);
    } catch (error) {
      return void setImmediate(cb, error as Error);
    }
    return void setImmediate(cb, null, value);
  };
}

/**
 * Keeps each table's description in memory for item requests (`getTable` with its status checked, which
 * every item action asks for and none changes). Whatever changes a table (CreateTable, UpdateTable,
 * DeleteTable, and the timers that finish them) writes it with `tableDb.put` or `tableDb.del`: each empties
 * the cache, before the write and again once it is done, and a read from LevelDB that one of them overlapped
 * is not kept. The requests that describe or change a table (`checkStatus` false) read LevelDB as before and
 * get their own copy, which UpdateTable and DeleteTable change in place.
 */
export function cacheTables(store: Store): void {
  const cached = new Map<string, unknown>();
  let generation = 0;
  const changed = () => {
    generation++;
    cached.clear();
  };
  const { put, del } = store.tableDb;
  store.tableDb.put = (key, value, cb) => {
    changed();
    put.call(store.tableDb, key, value, (error) => {
      changed();
      cb(error);
    });
  };
  store.tableDb.del = (key, cb) => {
    changed();
    del.call(store.tableDb, key, (error) => {
      changed();
      cb(error);
    });
  };
  const getTable = store.getTable.bind(store);
  store.getTable = (name, checkStatus, cb) => {
    const done = (typeof checkStatus === 'function' ? checkStatus : cb) as (error: Error | null, table?: unknown) => void;
    // dynalite's own rule: a callback in the place of `checkStatus` leaves it truthy.
    if (!checkStatus) return getTable(name, checkStatus, done);
    const hit = cached.get(name);
    if (hit !== undefined) return done(null, hit);
    const from = generation;
    getTable(name, true, (error, table) => {
      if (!error && generation === from) cached.set(name, table);
      done(error, table);
    });
  };
}

/** dynalite's `httpHandler` (its index.js) from the body read on, in its order, with its answers. */
function serve(store: Store, request: DynaliteRequest): Promise<DynaliteResponse> {
  const headers: [string, string][] = [];
  const send = (data: unknown, status = 200, contentType = 'application/json'): DynaliteResponse => {
    const body = JSON.stringify(data);
    if (!request.internal) headers.push(['x-amz-crc32', String(crc32(body))], ['Content-Type', contentType], ['Content-Length', String(Buffer.byteLength(body, 'utf8'))]);
    return { status, headers, body };
  };
  const header = (name: string): string | undefined => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  if (request.body.length > MAX_REQUEST_BYTES) return Promise.resolve({ status: 413, headers: [['Transfer-Encoding', 'chunked']], body: '' });
  const text = request.body.toString();
  if (!request.internal) headers.push(['x-amzn-RequestId', rand52CharId()]);
  if (header('origin')) {
    headers.push(['Access-Control-Allow-Origin', '*']);
    if (request.method === 'OPTIONS') {
      const allowHeaders = header('access-control-request-headers');
      const allowMethod = header('access-control-request-method');
      if (allowHeaders) headers.push(['Access-Control-Allow-Headers', allowHeaders]);
      if (allowMethod) headers.push(['Access-Control-Allow-Methods', allowMethod]);
      headers.push(['Access-Control-Max-Age', '172800'], ['Content-Length', '0']);
      return Promise.resolve({ status: 200, headers, body: '' });
    }
  }
  if (request.method === 'GET') {
    headers.push(['x-amz-crc32', '3128867991'], ['Content-Length', '42']);
    return Promise.resolve({ status: 200, headers, body: 'healthy: dynamodb.us-east-1.amazonaws.com ' });
  }
  const contentType = (header('content-type') ?? '').split(';')[0].trim();
  if (request.method !== 'POST' || (text && contentType !== 'application/json' && contentType !== 'application/x-amz-json-1.0')) {
    headers.push(['x-amz-crc32', '3552371480'], ['Content-Length', '29']);
    return Promise.resolve({ status: 404, headers, body: '<UnknownOperationException/>\n' });
  }
  const responseType = contentType !== 'application/x-amz-json-1.0' ? 'application/json' : contentType;
  const answer = (data: unknown, status?: number) => Promise.resolve(send(data, status, responseType));

  let data: unknown;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      return answer({ __type: 'com.amazon.coral.service#SerializationException' }, 400);
    }
  }
  const target = (header('x-amz-target') ?? '').split('.');
  if (target.length !== 2 || !VALID_APIS.includes(target[0]) || !Object.hasOwn(OPERATIONS, target[1])) return answer({ __type: 'com.amazon.coral.service#UnknownOperationException' }, 400);

  const authHeader = header('authorization');
  // A URL with no query has no parameters (the SDK's and the transaction layer's are `/`).
  const query = request.url.includes('?') ? new URL(request.url, 'http://localhost').searchParams : NO_QUERY;
  const authQuery = query.has('X-Amz-Algorithm');
  if (authHeader && authQuery) {
    return answer({ __type: 'com.amazon.coral.service#InvalidSignatureException', message: "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as HTTP header." }, 400);
  }
  if ((!authHeader && !authQuery) || (authHeader && authHeader.trim().slice(0, 5) !== 'AWS4-')) {
    return answer({ __type: 'com.amazon.coral.service#MissingAuthenticationTokenException', message: 'Request is missing Authentication Token' }, 400);
  }
  let msg = '';
  if (authHeader) {
    const authParams: Record<string, string> = {};
    for (const part of authHeader.split(/,| /).slice(1).filter(Boolean)) {
      const keyVal = part.trim().split('=');
      authParams[keyVal[0]] = keyVal[1];
    }
    for (const param of ['Credential', 'Signature', 'SignedHeaders']) if (!authParams[param]) msg += `Authorization header requires '${param}' parameter. `;
    if (!header('x-amz-date') && !header('date')) msg += "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. ";
    if (msg) msg += `Authorization=${authHeader}`;
  } else {
    for (const param of ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Signature', 'X-Amz-SignedHeaders', 'X-Amz-Date']) if (!query.get(param)) msg += `AWS query-string parameters must include '${param}'. `;
    if (msg) msg += 'Re-examine the query-string parameters.';
  }
  if (msg) return answer({ __type: 'com.amazon.coral.service#IncompleteSignatureException', message: msg }, 400);
  if (!text) return answer({ __type: 'com.amazon.coral.service#SerializationException' }, 400);

  const { action, validation } = OPERATIONS[target[1]];
  try {
    data = checkTypes(data, validation.types);
    checkValidations(data, validation.types, validation.custom, store);
  } catch (error) {
    const refusal = error as { statusCode?: number; body?: unknown };
    if (refusal.statusCode) return answer(refusal.body, refusal.statusCode);
    return Promise.reject(error);
  }
  return new Promise((resolve, reject) => {
    action(store as never, data, (error, result) => {
      if (error && error.statusCode) return resolve(send(error.body, error.statusCode, responseType));
      if (error) return reject(error);
      resolve(send(result, 200, responseType));
    });
  });
}

const NO_QUERY = new URLSearchParams();

/** Random bytes for request ids, drawn 64 ids at a time (one call of the system's generator rather than 64). */
const ID_BYTES = 39;
const idPool = Buffer.alloc(ID_BYTES * 64);
let idPoolUsed = idPool.length;

/** dynalite's request id: 52 characters of base64 (39 random bytes), upper case, `+` and `/` made `0`. */
function rand52CharId(): string {
  if (idPoolUsed === idPool.length) {
    randomFillSync(idPool);
    idPoolUsed = 0;
  }
  const bytes = idPool.subarray(idPoolUsed, idPoolUsed + ID_BYTES);
  idPoolUsed += ID_BYTES;
  return bytes.toString('base64').toUpperCase().replace(/\+|\//g, '0');
}
