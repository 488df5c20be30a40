import { type AttributeValue, BatchGetItemCommand, BatchWriteItemCommand, ConditionalCheckFailedException, type DynamoDBClient, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import type { FileNode, JournalEntry, TrashNote, UploadJournal, WithdrawnNote } from '../core/ports';
import { BATCH_ATTEMPTS, backoff, chunk, scanAll } from './batches';
import { UPLOADS_PARTITION_KEY as PK, UPLOADS_TTL_ATTRIBUTE } from './schema';

type Item = Record<string, AttributeValue>;

/** Entries share the upload sessions' table under ids of their own; a session id is a bare UUID. */
const ID_PREFIX = 'journal#';
/**
 * Bytes one item holds for its files' paths and keys and the room their note and `left` names may take, under
 * DynamoDB's 400 KB an item (the attribute names, the id and dates take the rest).
 */
const ENTRY_BYTES = 380 * 1024;
/** The note a withdrawing writer leaves on its entries (`withdraw`): a boolean attribute, absent until then. */
const WITHDRAWN = 'withdrawn';
/** The note's records its own replaced (`WithdrawnNote.replaced`): a JSON array, set with `withdrawn`. */
const REPLACED = 'replaced';
/** Bytes of those records the writer left to the sweep (`leave`): a list of `{ path, objectKey }` maps. */
const LEFT = 'left';
/** The id of the key whose request opened the entry (`JournalEntry.createdBy`), kept in the room the id and dates take. */
const CREATED_BY = 'createdBy';
/**
 * Room an item keeps for each file's note, beyond a path and a key (an id, a size, a content type, dates, an
 * ETag, a `pending` id, and the JSON around them: about 350 bytes with a short content type); a replaced
 * record that would take more is left out of the note (what it replaced is then lost as before gap 12's fix,
 * in the one race that gap needs).
 */
const NOTE_BYTES = 512;
/** Bytes a `left` entry takes beyond its path and key: the attribute names `path` and `objectKey`, and a map's and a list element's overhead. */
const LEFT_ENTRY_BYTES = 32;

/**
 * The upload journal in the upload sessions' table: one item per entry (a long batch takes several), with
 * no TTL attribute, so that only the sweep removes an entry, once it has dealt with the bytes.
 */
export class DynamoUploadJournal implements UploadJournal {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  async open(drive: string, files: readonly { path: string; objectKey: string }[], sweepAfter: Date, by?: string): Promise<string[]> {
    const ids: string[] = [];
    for (const group of bySize(files)) {
      const item = journalItem(drive, group, sweepAfter, by);
      await this.client.send(new PutItemCommand({ TableName: this.table, Item: item }));
      for (let i = 0; i < group.length; i++) ids.push(item[PK].S!);
    }
    return ids;
  }

  async close(ids: readonly string[]): Promise<void> {
    for (const batch of chunk([...new Set(ids)], 25)) {
      let requests = batch.map((id) => ({ DeleteRequest: { Key: { [PK]: { S: id } } } }));
      for (let attempt = 0; requests.length > 0; attempt++) {
        if (attempt === BATCH_ATTEMPTS) throw new Error(`BatchWriteItem left ${requests.length} journal entries unclosed after ${attempt} attempts`);
        if (attempt > 0) await backoff(attempt);
        const out = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: requests } }));
        requests = (out.UnprocessedItems?.[this.table] ?? []) as typeof requests;
      }
    }
  }

  async due(now: Date): Promise<JournalEntry[]> {
    return (await this.scan()).filter((entry) => Date.parse(entry.sweepAfter) <= now.getTime());
  }

  async withdraw(ids: readonly string[], replaced: readonly (FileNode | undefined)[] = []): Promise<void> {
    for (const id of new Set(ids)) {
      const records = ids.flatMap((other, i) => (other === id && replaced[i] && fitsNote(replaced[i]) ? [replaced[i]] : []));
      try {
        // Only on an entry still there: a note must never make an item the sweep would read as an entry.
        await this.client.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: { [PK]: { S: id } },
            UpdateExpression: 'SET #withdrawn = :yes, #replaced = :replaced',
            ConditionExpression: 'attribute_exists(#pk)',
            ExpressionAttributeNames: { '#pk': PK, '#withdrawn': WITHDRAWN, '#replaced': REPLACED },
            ExpressionAttributeValues: { ':yes': { BOOL: true }, ':replaced': { S: JSON.stringify(records) } },
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
  }

  async withdrew(id: string): Promise<WithdrawnNote | undefined> {
    // A session's id has no prefix: never an entry, never noted.
    if (!id.startsWith(ID_PREFIX)) return undefined;
    const { Item } = await this.client.send(
      new GetItemCommand({
        TableName: this.table,
        Key: { [PK]: { S: id } },
        ConsistentRead: true,
        ProjectionExpression: '#withdrawn, #replaced',
        ExpressionAttributeNames: { '#withdrawn': WITHDRAWN, '#replaced': REPLACED },
      }),
    );
    return Item?.[WITHDRAWN]?.BOOL === true ? { replaced: replacedOf(Item) } : undefined;
  }

  async leave(ids: readonly string[], files: readonly ({ path: string; objectKey: string } | undefined)[]): Promise<void> {
    for (const id of new Set(ids)) {
      const named = ids.flatMap((other, i) => (other === id && files[i] ? [{ M: { path: { S: files[i].path }, objectKey: { S: files[i].objectKey } } }] : []));
      if (named.length === 0) continue;
      try {
        await this.client.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: { [PK]: { S: id } },
            UpdateExpression: 'SET #left = list_append(if_not_exists(#left, :none), :named)',
            ConditionExpression: 'attribute_exists(#pk)',
            ExpressionAttributeNames: { '#pk': PK, '#left': LEFT },
            ExpressionAttributeValues: { ':none': { L: [] }, ':named': { L: named } },
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
  }

  async trashNotes(entry: string, keys: readonly string[]): Promise<Map<string, TrashNote>> {
    const found = new Map<string, TrashNote>();
    for (const batch of chunk([...new Set(keys)], 100)) {
      let wanted: Item[] = batch.map((key) => ({ [PK]: { S: noteId(entry, key) } }));
      for (let attempt = 0; wanted.length > 0; attempt++) {
        if (attempt === BATCH_ATTEMPTS) throw new Error(`BatchGetItem left ${wanted.length} trash notes unread after ${attempt} attempts`);
        if (attempt > 0) await backoff(attempt);
        const out = await this.client.send(new BatchGetItemCommand({ RequestItems: { [this.table]: { Keys: wanted, ConsistentRead: true } } }));
        for (const item of out.Responses?.[this.table] ?? []) {
          const key = item[PK].S!.slice(noteId(entry, '').length);
          found.set(key, { drive: item.drive.S!, id: item.trashId.S!, ...(item.relative?.S !== undefined ? { relative: item.relative.S } : {}) });
        }
        wanted = (out.UnprocessedKeys?.[this.table]?.Keys ?? []) as Item[];
      }
    }
    return found;
  }

  async openKeys(): Promise<string[]> {
    return (await this.scan()).flatMap((entry) => [...entry.files, ...(entry.left ?? [])].map((file) => file.objectKey));
  }

  /** Every open entry: the table holds only uploads in flight, so a scan stays small. */
  private async scan(): Promise<JournalEntry[]> {
    const items = await scanAll(this.client, {
      TableName: this.table,
      ConsistentRead: true,
      FilterExpression: 'begins_with(#id, :prefix)',
      ExpressionAttributeNames: { '#id': PK },
      ExpressionAttributeValues: { ':prefix': { S: ID_PREFIX } },
    });
    return items.map(fromItem);
  }
}

/** A new journal entry's item, naming `files` (few enough for one item): for writes that open one in a transaction. */
export function journalItem(drive: string, files: readonly { path: string; objectKey: string }[], sweepAfter: Date, by?: string): Item {
  return {
    [PK]: { S: `${ID_PREFIX}${randomUUID()}` },
    drive: { S: drive },
    files: { S: JSON.stringify(files.map((file) => [file.path, file.objectKey])) },
    sweepAfter: { S: sweepAfter.toISOString() },
    ...(by !== undefined ? { [CREATED_BY]: { S: by } } : {}),
  };
}

function fromItem(item: Item): JournalEntry {
  const files = JSON.parse(item.files.S!) as [string, string][];
  const entry: JournalEntry = { id: item[PK].S!, drive: item.drive.S!, files: files.map(([path, objectKey]) => ({ path, objectKey })), sweepAfter: item.sweepAfter.S! };
  if (item[CREATED_BY]?.S !== undefined) entry.createdBy = item[CREATED_BY].S;
  const left = leftOf(item);
  return { ...entry, ...(item[WITHDRAWN]?.BOOL === true ? { withdrawn: true as const, replaced: replacedOf(item) } : {}), ...(left.length > 0 ? { left } : {}) };
}

/** The records a withdrawn entry's note names (none for a note written before gap 12's fix). */
function replacedOf(item: Item): FileNode[] {
  return item[REPLACED]?.S ? (JSON.parse(item[REPLACED].S) as FileNode[]) : [];
}

/** The bytes an entry's writer left to the sweep. */
export function leftOf(item: Item): { path: string; objectKey: string }[] {
  return (item[LEFT]?.L ?? []).map((named) => ({ path: named.M!.path.S!, objectKey: named.M!.objectKey.S! }));
}

/**
 * Room a file's note takes at most: the replaced record's path (the file's, as JSON writes it: a `\\` or `"`
 * takes two bytes) and key (one as long), and `NOTE_BYTES`.
 */
function noteRoom(file: { path: string; objectKey: string }): number {
  return Buffer.byteLength(JSON.stringify(file.path)) + file.objectKey.length + NOTE_BYTES;
}

/** Room a file's name in the `left` list takes should its writer leave what it replaced: a map of path and key. */
function leftRoom(file: { path: string; objectKey: string }): number {
  return Buffer.byteLength(file.path) + file.objectKey.length + LEFT_ENTRY_BYTES;
}

/** Whether a replaced record fits the room its file's entry kept for the note. */
function fitsNote(record: FileNode): boolean {
  return Buffer.byteLength(JSON.stringify(record)) <= noteRoom(record);
}

/** `files` in groups whose JSON fits one item. */
function bySize(files: readonly { path: string; objectKey: string }[]): { path: string; objectKey: string }[][] {
  const groups: { path: string; objectKey: string }[][] = [[]];
  let bytes = 0;
  for (const file of files) {
    // Room for the file as the entry names it (JSON), and for its note and its name in `left` should its
    // writer withdraw (gap 12).
    const size = Buffer.byteLength(JSON.stringify([file.path, file.objectKey])) + 1 + noteRoom(file) + leftRoom(file);
    if (bytes + size > ENTRY_BYTES && groups.at(-1)!.length > 0) {
      groups.push([]);
      bytes = 0;
    }
    groups.at(-1)!.push(file);
    bytes += size;
  }
  return groups;
}

/** The id of the trash note on `objectKey` of the entry `entry`: never `journal#…`, so no scan reads it as an entry. */
function noteId(entry: string, objectKey: string): string {
  return `trashnote#${entry}#${objectKey}`;
}

/**
 * The item of a trash note (`TrashNote`): written in the transaction that makes a trash item of a record whose
 * `pending` names `entry`, kept (TTL) a day past the item's `purgeAt`.
 */
export function trashNoteItem(entry: string, objectKey: string, note: TrashNote, purgeAt: string): Item {
  return {
    [PK]: { S: noteId(entry, objectKey) },
    drive: { S: note.drive },
    trashId: { S: note.id },
    ...(note.relative !== undefined ? { relative: { S: note.relative } } : {}),
    [UPLOADS_TTL_ATTRIBUTE]: { N: String(Math.ceil(Date.parse(purgeAt) / 1000) + 86_400) },
  };
}
