import { DynamoUploadJournal } from '../../functions/aws/dynamo-upload-journal';
import type { FileNode } from '../../functions/core/ports';
import { LOCAL_RESOURCES } from '../../lib/local/emulators';
import { useEmbeddedDynamo } from '../support/embedded-dynamo';

// Review of gap 12 (protocol/README.md, "Gap 12"): a journal entry's item keeps room for each file's note
// (`withdraw`'s `replaced`), but the `left` list a withdrawn writer appends (`leave`) has no room of its own.
// DynamoDB (here dynalite, the local host's emulator) refuses an item over 400 KB.

const dynamo = useEmbeddedDynamo('journal-room');
const DRIVE = 'room';

/**
 * A path of `bytes` bytes (segments of 200, within the 255-byte segment and 1,024-byte path limits), its first
 * `escaped` characters backslashes (a valid name character that JSON writes as two bytes).
 */
function longPath(i: number, bytes: number, escaped = 0): string {
  const tail = `/f${String(i).padStart(5, '0')}`;
  const body = `${'\\'.repeat(escaped)}${'d'.repeat(bytes)}`;
  let path = '';
  let used = 0;
  while (path.length + tail.length < bytes) {
    const n = Math.min(199, bytes - tail.length - path.length - 1);
    path += `/${body.slice(used, used + n)}`;
    used += n;
  }
  return `${path}${tail}`;
}

/** The record an earlier upload left at `path`: a short content type, as the note's room expects. */
function recordAt(path: string, i: number): FileNode {
  return {
    kind: 'file',
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    path,
    size: 1234,
    contentType: 'application/octet-stream',
    createdAt: '2026-11-27T10:00:00.000Z',
    objectKey: `${DRIVE}/11111111-1111-4111-8111-${String(i).padStart(12, '0')}`,
    etag: '0123456789abcdef0123456789abcdef',
  };
}

describe('DynamoUploadJournal: an item with its note and its left bytes', () => {
  it('names on the entry every replaced key a withdrawn writer leaves, for an upload of 1,000 files of 1 KB paths', async () => {
    // Prepare: 1,000 files of 1 KB paths over files already there (the most one request takes); the
    // journal splits them into items with room for the note.
    const journal = new DynamoUploadJournal(dynamo.client, LOCAL_RESOURCES.uploadsTable);
    const replaced = Array.from({ length: 1000 }, (_, i) => recordAt(longPath(i, 1024), i));
    const files = replaced.map((record, i) => ({ path: record.path, objectKey: `${DRIVE}/22222222-2222-4222-8222-${String(i).padStart(12, '0')}` }));
    const ids = await journal.open(DRIVE, files, new Date(0), '0123456789abcdef');

    // Act: the writer withdraws (its note carries what each record replaced), then finds each record taken
    // by another upload (a concurrent sync of the same folder), and names the replaced bytes for the sweep.
    await journal.withdraw(ids, replaced);
    const left = await journal.leave(ids, replaced).then(
      () => undefined,
      (error: Error) => error.message,
    );

    // Assess: the note stood, and so must the left list (else those bytes are named by nothing: an orphan).
    expect(left).toBeUndefined();
    const entries = (await journal.due(new Date())).filter((entry) => ids.includes(entry.id));
    expect(entries.flatMap((entry) => entry.left ?? []).length).toBe(1000);
    // What the sweep trashes them as: each left key's record in the note, under the key that opened the entry.
    expect(entries.every((entry) => entry.createdBy === '0123456789abcdef')).toBe(true);
    const noted = new Set(entries.flatMap((entry) => (entry.replaced ?? []).map((record) => record.objectKey)));
    expect(entries.flatMap((entry) => entry.left ?? []).every((file) => noted.has(file.objectKey))).toBe(true);
  });

  it('notes what each record replaced on a withdrawal of 1,000 files whose 1 KB paths hold backslashes', async () => {
    // Prepare: as above, each path with 250 backslashes (JSON doubles them in `files` and in the note; the
    // room each file keeps counts them once).
    const journal = new DynamoUploadJournal(dynamo.client, LOCAL_RESOURCES.uploadsTable);
    const replaced = Array.from({ length: 1000 }, (_, i) => recordAt(longPath(i, 1024, 250), i));
    expect(Buffer.byteLength(replaced[0].path)).toBe(1024);
    const files = replaced.map((record, i) => ({ path: record.path, objectKey: `${DRIVE}/33333333-3333-4333-8333-${String(i).padStart(12, '0')}` }));
    const ids = await journal.open(DRIVE, files, new Date(0));

    // Act: the writer withdraws, its note carrying what each record replaced.
    const noted = await journal.withdraw(ids, replaced).then(
      () => undefined,
      (error: Error) => error.message,
    );

    // Assess: the note stood (a failed note fails the request with a 500, and a record of its own that another
    // writer puts back then stays), and the entries read back noted.
    expect(noted).toBeUndefined();
    const entries = (await journal.due(new Date())).filter((entry) => ids.includes(entry.id));
    expect(entries.every((entry) => entry.withdrawn)).toBe(true);
  });
});
