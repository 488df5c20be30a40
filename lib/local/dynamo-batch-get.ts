import { itemSize } from 'dynalite/db';
import type { Answer, Call, Reply } from './dynamo-transactions';

/** The most bytes of items one BatchGetItem returns, as in AWS. */
export const BATCH_GET_BYTES = 16 * 1024 * 1024;

type Attributes = Record<string, unknown>;

interface TableRequest {
  Keys: Attributes[];
  ConsistentRead?: boolean;
  ProjectionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  AttributesToGet?: string[];
}

/**
 * BatchGetItem with AWS's limit of 16 MB of items an answer. dynalite stops at about 1.4 MB and leaves the
 * rest as UnprocessedKeys (in a random order), so a caller made many more calls than on AWS. When dynalite
 * leaves keys, every key is read again, one GetItem each, in the request's order, and only those past
 * 16 MB are left unprocessed. dynalite checks the request first (its limits and keys), as it answers the
 * first call.
 */
export async function batchGet(call: Call, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  let input: { RequestItems: Record<string, TableRequest> };
  try {
    input = JSON.parse(body.toString('utf8')) as typeof input;
  } catch {
    return { status: 400, errorType: 'SerializationException', body: JSON.stringify({ __type: 'com.amazon.coral.service#SerializationException', message: 'the request body is not JSON' }) };
  }
  const first = await call('BatchGetItem', input, headers);
  if (first.status !== 200 || Object.keys((first.json.UnprocessedKeys as object | undefined) ?? {}).length === 0) return passOn(first);
  const tables = input.RequestItems;
  const responses: Record<string, Attributes[]> = {};
  const unprocessed: Record<string, TableRequest> = {};
  let bytes = 0;
  for (const [table, { Keys, ...read }] of Object.entries(tables)) {
    responses[table] = [];
    for (const key of Keys) {
      const got = await call('GetItem', { TableName: table, Key: key, ...read }, headers);
      if (got.status !== 200) return passOn(got);
      const item = got.json.Item as Attributes | undefined;
      if (!item) continue;
      const size = itemSize(item);
      if (bytes + size <= BATCH_GET_BYTES) {
        responses[table].push(item);
        bytes += size;
      } else {
        (unprocessed[table] ??= { ...read, Keys: [] }).Keys.push(key);
      }
    }
  }
  return { status: 200, body: JSON.stringify({ Responses: responses, UnprocessedKeys: unprocessed }) };
}

function passOn(reply: Reply): Answer {
  return { status: reply.status, body: reply.text, ...(reply.status === 200 ? {} : { errorType: String(reply.json.__type ?? '') }) };
}
