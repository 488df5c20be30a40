import { DynamoUploadJournal } from '../../functions/aws/dynamo-upload-journal';
import type { FileNode } from '../../functions/core/ports';
import { LOCAL_RESOURCES } from '../../lib/local/emulators';
import { useEmbeddedDynamo } from '../support/embedded-dynamo';

// Review of gap 12 (protocol/README.md, "Gap 12"): a journal entry's item keeps room for each file's note
// (`withdraw`'s `replaced`), but the `left` list a withdrawn writer appends (`leave`) has no room of its own.
// DynamoDB (here dynalite, the local host's emulator) refuses an item over 400 KB.

const dynamo = useEmbeddedDynamo('journal-room');
const DRIVE = 'room';

/** A path of `bytes` bytes (segments of 200, within the 255-byte segment and 1,024-byte path limits). */
function longPath(i: number, bytes: number): string {
  const tail = `/f${String(i).padStart(5, '0')}`;
  let path = '';
  while (path.length + tail.length < bytes) path += `/${'d'.repeat(Math.min(199, bytes - tail.length - path.length - 1))}`;
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
    const ids = await journal.open(DRIVE, files, new Date(0));

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
  });
});
