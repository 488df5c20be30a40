import { CLAIM_LEASE_MS, type LargeUploadDeps, abortUpload, completeUpload, startUpload } from '../../../functions/core/large-upload';
import { parentOf } from '../../../functions/core/paths';
import { type DriveNode, type FileNode, type FolderNode, type MultipartStore, type NodeStore, type ObjectStore, type PutFileResult, type StoredPart, type UploadSession, type UploadSessionStore, type WriteCondition, WRITE_REFUSED } from '../../../functions/core/ports';

// In-memory stores with S3's and DynamoDB's semantics for what completion relies on, so each failure can be
// placed exactly. The real adapters are tested against the emulators in test/integration/large-uploads.test.ts.

class MemoryNodes implements NodeStore {
  readonly items = new Map<string, DriveNode>();
  failPuts = 0;
  /** Runs just before a record write is judged: another request's write landing between a read and this write. */
  beforePut?: () => void;
  async get(_: string, path: string) {
    return this.items.get(path);
  }
  async getMany(_: string, paths: readonly string[]) {
    return new Map(paths.flatMap((path) => (this.items.has(path) ? [[path, this.items.get(path)!] as const] : [])));
  }
  async children(_: string, folder: string) {
    return [...this.items.values()].filter((node) => parentOf(node.path) === folder);
  }
  async hasChildren(drive: string, folder: string) {
    return (await this.children(drive, folder)).length > 0;
  }
  async createFolder(_: string, folder: FolderNode) {
    const held = this.items.get(folder.path);
    if (held) return held.kind === 'folder' ? held : undefined;
    this.items.set(folder.path, folder);
    return folder;
  }
  /** Writes saved whose reply is lost: the caller sees the call fail. */
  lostReplies = 0;
  async putFile(_: string, file: FileNode, options: { condition?: WriteCondition } = {}): Promise<PutFileResult> {
    // A throttle at every attempt, as the adapter marks it (`WRITE_REFUSED`): nothing was written.
    if (this.failPuts-- > 0) throw Object.assign(new Error('throttled'), { name: 'ThrottlingException', $fault: 'client', [WRITE_REFUSED]: true });
    this.beforePut?.();
    if (this.lostReplies-- > 0) {
      await this.putFile(_, file, options);
      throw new Error('socket hang up');
    }
    const held = this.items.get(file.path);
    // The DynamoDB adapter's condition: the request's, else no folder; the write's own record always passes.
    const { condition } = options;
    if (condition) {
      const allowed = held?.id === file.id || ('ifMatch' in condition ? held?.kind === 'file' && held.etag === condition.ifMatch : !held);
      if (!allowed) return { ok: false, precondition: true };
    } else if (held?.kind === 'folder') return { ok: false };
    this.items.set(file.path, file);
    return { ok: true, replaced: held?.kind === 'file' && held.id !== file.id ? held : undefined };
  }
  async removeIfSame(_: string, path: string, id: string) {
    if (this.items.get(path)?.id !== id) return false;
    this.items.delete(path);
    return true;
  }
  async restoreIfSame(_: string, path: string, id: string, previous: DriveNode) {
    if (this.items.get(path)?.id !== id) return false;
    this.items.set(path, previous);
    return true;
  }
  async childrenPage(): Promise<never> {
    throw new Error('not used');
  }
  async keepFolder(): Promise<never> {
    throw new Error('not used');
  }
  async markDeleting(): Promise<never> {
    throw new Error('not used');
  }
  async unmarkDeleting(): Promise<never> {
    throw new Error('not used');
  }
  async markMoving(): Promise<never> {
    throw new Error('not used');
  }
  async unmarkMoving(): Promise<never> {
    throw new Error('not used');
  }
  async removeFolder(): Promise<never> {
    throw new Error('not used');
  }
}

class MemoryStorage implements MultipartStore, ObjectStore {
  readonly uploads = new Map<string, { key: string; parts: Map<number, StoredPart> }>();
  readonly objects = new Map<string, { size: number; etag: string }>();
  failSizes = 0;
  completeAnswer: 'done' | 'rejected' = 'done';
  async begin(key: string) {
    const id = `mp-${this.uploads.size + 1}`;
    this.uploads.set(id, { key, parts: new Map() });
    return id;
  }
  async partUrls(_: string, id: string, count: number) {
    return Array.from({ length: count }, (__, i) => `https://s3/${id}/${i + 1}`);
  }
  putPart(id: string, number: number, size: number): string {
    const etag = `"${id}-${number}-${size}"`;
    this.uploads.get(id)!.parts.set(number, { number, etag, size });
    return etag;
  }
  async listParts(_: string, id: string) {
    const upload = this.uploads.get(id);
    return upload && [...upload.parts.values()];
  }
  async complete(key: string, id: string, parts: readonly { number: number; etag: string }[]) {
    const upload = this.uploads.get(id);
    if (!upload) return 'gone' as const;
    if (this.completeAnswer === 'rejected') return 'rejected' as const;
    this.objects.set(key, { size: parts.reduce((sum, part) => sum + upload.parts.get(part.number)!.size, 0), etag: 'assembled-2' });
    this.uploads.delete(id);
    return 'done' as const;
  }
  async head(key: string) {
    if (this.failSizes-- > 0) throw new Error('HeadObject timed out');
    return this.objects.get(key);
  }
  async abort(_: string, id: string) {
    this.uploads.delete(id);
  }
  async put(): Promise<never> {
    throw new Error('not used');
  }
  async open(): Promise<never> {
    throw new Error('not used');
  }
  async deleteMany(keys: readonly string[]) {
    for (const key of keys) this.objects.delete(key);
  }
}

class MemorySessions implements UploadSessionStore {
  readonly sessions = new Map<string, { session: UploadSession; claimedUntil?: number }>();
  async put(session: UploadSession) {
    this.sessions.set(session.id, { session });
  }
  async get(drive: string, id: string) {
    const held = this.sessions.get(id);
    return held?.session.drive === drive ? held.session : undefined;
  }
  async claim(drive: string, id: string, leaseMs: number) {
    const held = this.sessions.get(id);
    if (!held || held.session.drive !== drive) return undefined;
    if ((held.claimedUntil ?? 0) > Date.now()) return 'busy' as const;
    held.claimedUntil = Date.now() + leaseMs;
    return held.session;
  }
  async markRecording(id: string) {
    const held = this.sessions.get(id);
    if (held) held.session = { ...held.session, recording: true };
  }
  async release(id: string, recordFree = false) {
    const held = this.sessions.get(id);
    if (!held) return;
    held.claimedUntil = undefined;
    const { recording: _, ...rest } = held.session;
    if (recordFree) held.session = rest;
  }
  async remove(id: string) {
    this.sessions.delete(id);
  }
}

const MiB = 1024 * 1024;
const limits = { maxFileBytes: 10 * 1024 * MiB, expirySeconds: 3600 };
let nodes: MemoryNodes;
let storage: MemoryStorage;
let sessions: MemorySessions;
let deps: LargeUploadDeps;

beforeEach(() => {
  nodes = new MemoryNodes();
  storage = new MemoryStorage();
  sessions = new MemorySessions();
  deps = { nodes, objects: storage, parts: storage, sessions };
  jest.spyOn(console, 'error').mockImplementation(() => undefined);
});

afterEach(() => jest.restoreAllMocks());

/** Starts a 10 MiB upload to /big.bin and sends both parts; returns the session and the part list. */
async function uploaded() {
  const { session } = await startUpload(deps, 'd', { path: '/dir/big.bin', size: 10 * MiB }, limits);
  const parts = [
    { number: 1, etag: storage.putPart(session.multipartId, 1, 8 * MiB) },
    { number: 2, etag: storage.putPart(session.multipartId, 2, 2 * MiB) },
  ];
  return { session, parts };
}

describe('Function: completeUpload, when something fails part-way', () => {
  it('a failure after S3 assembled the object keeps the session; the retry records that object', async () => {
    const { session, parts } = await uploaded();
    storage.failSizes = 1; // HeadObject of the assembled object fails

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toThrow('HeadObject timed out');
    expect(storage.uploads.size).toBe(0); // assembled…
    expect(sessions.sessions.get(session.id)?.claimedUntil).toBeUndefined(); // …and the session released

    const file = await completeUpload(deps, 'd', session.id, parts);
    expect(file).toMatchObject({ id: session.fileId, path: '/dir/big.bin', size: 10 * MiB, objectKey: session.objectKey });
    expect(nodes.items.get('/dir/big.bin')).toEqual(file);
    expect(nodes.items.get('/dir')).toMatchObject({ kind: 'folder' });
    expect(storage.objects.has(session.objectKey)).toBe(true);
    expect(sessions.sessions.size).toBe(0);
  });

  it('a failing record write keeps the assembled bytes and the session for another try', async () => {
    const { session, parts } = await uploaded();
    nodes.failPuts = 1;

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toThrow('throttled');
    expect(storage.objects.get(session.objectKey)?.size).toBe(10 * MiB);
    expect(nodes.items.has('/dir/big.bin')).toBe(false);

    await expect(completeUpload(deps, 'd', session.id, parts)).resolves.toMatchObject({ size: 10 * MiB });
  });

  // The record's write was saved but its reply lost, then the commit withdrew (an empty-folder delete's mark
  // above): the undo leaves a record whose write reply was lost. The completion answered 409 and deleted the
  // object under it; now the request fails, both stay, and a retry finds the record.
  it('a record that may stand after a failed commit keeps the object; a retry answers with the record', async () => {
    const { session, parts } = await uploaded();
    nodes.lostReplies = 1;
    nodes.beforePut = () => {
      nodes.beforePut = undefined;
      nodes.items.set('/dir', { ...(nodes.items.get('/dir') as FolderNode), deleting: 'empty' });
    };

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toMatchObject({ name: 'RecordMayStand' });
    expect(nodes.items.get('/dir/big.bin')).toMatchObject({ id: session.fileId });
    expect(storage.objects.has(session.objectKey)).toBe(true);
    expect(sessions.sessions.get(session.id)?.session.recording).toBe(true);

    const { deleting: _, ...live } = nodes.items.get('/dir') as FolderNode;
    nodes.items.set('/dir', live);
    const putFile = jest.spyOn(nodes, 'putFile');
    await expect(completeUpload(deps, 'd', session.id, parts)).resolves.toMatchObject({ id: session.fileId, path: '/dir/big.bin' });
    expect(putFile).not.toHaveBeenCalled();
    expect(sessions.sessions.size).toBe(0);
  });

  it('marks the session recording beside the read of the assembled object, before the record is written', async () => {
    const { session, parts } = await uploaded();
    const order: string[] = [];
    jest.spyOn(sessions, 'markRecording').mockImplementation(async (id) => {
      order.push('mark');
      sessions.sessions.get(id)!.session.recording = true;
    });
    nodes.beforePut = () => order.push('record');
    await completeUpload(deps, 'd', session.id, parts);
    expect(order).toEqual(['mark', 'record']);
  });

  it('a failed record write releases the session without its mark: the retry records the object', async () => {
    const { session, parts } = await uploaded();
    nodes.failPuts = 1;
    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toThrow('throttled');
    expect(sessions.sessions.get(session.id)?.session.recording).toBeUndefined();
    await expect(completeUpload(deps, 'd', session.id, parts)).resolves.toMatchObject({ id: session.fileId });
  });

  // S3 may finish assembling after the request gave up (a big object takes minutes): a completion that died
  // there marked nothing, and the next one records the object.
  it('a completion that died during assembly leaves no mark: the retry records the object', async () => {
    const { session, parts } = await uploaded();
    const complete = storage.complete.bind(storage);
    jest.spyOn(storage, 'complete').mockImplementationOnce(async (...args) => {
      await complete(...args);
      throw new Error('Lambda timed out');
    });
    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toThrow('timed out');
    await expect(completeUpload(deps, 'd', session.id, parts)).resolves.toMatchObject({ id: session.fileId, size: 10 * MiB });
  });

  it('a folder at the destination is a 409 before assembly: the parts and the session stay', async () => {
    const { session, parts } = await uploaded();
    await nodes.createFolder('d', { kind: 'folder', id: 'f', path: '/dir/big.bin', createdAt: 'now' });

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toMatchObject({ code: 'conflict' });
    expect(storage.uploads.get(session.multipartId)?.parts.size).toBe(2);
    expect(sessions.sessions.has(session.id)).toBe(true);
  });

  it('parts S3 refuses at assembly (one sent again meanwhile) are a 422 that keeps the session', async () => {
    const { session, parts } = await uploaded();
    storage.completeAnswer = 'rejected';

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toMatchObject({ code: 'validation_error', message: expect.stringContaining('uploaded again') });
    expect(sessions.sessions.has(session.id)).toBe(true);
  });

  it('sends S3 the ETags it holds, not the quoting the client sent', async () => {
    const { session, parts } = await uploaded();
    const complete = jest.spyOn(storage, 'complete');

    await completeUpload(deps, 'd', session.id, parts.map((part) => ({ ...part, etag: part.etag.replace(/"/g, '') })));

    expect(complete.mock.calls[0][2].map((part) => part.etag)).toEqual(parts.map((part) => part.etag));
  });

  it('one completion at a time: a second one while the first holds the session gets 409', async () => {
    const { session, parts } = await uploaded();
    await sessions.claim('d', session.id, CLAIM_LEASE_MS); // a first request, still running

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('being completed') });
    await expect(abortUpload(deps, 'd', session.id)).rejects.toMatchObject({ code: 'conflict' });
    expect(storage.uploads.has(session.multipartId)).toBe(true);
  });

  it('a claim whose holder died lapses', async () => {
    const { session, parts } = await uploaded();
    await sessions.claim('d', session.id, -1); // a holder that died

    await expect(completeUpload(deps, 'd', session.id, parts)).resolves.toMatchObject({ path: '/dir/big.bin' });
  });

  it('an expired session is refused with 404 and its upload discarded, even before TTL removes it', async () => {
    const { session, parts } = await uploaded();
    sessions.sessions.get(session.id)!.session.expiresAt = new Date(Date.now() - 1000).toISOString();

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toMatchObject({ code: 'not_found', message: expect.stringContaining('expired') });
    expect(storage.uploads.size).toBe(0);
    expect(sessions.sessions.size).toBe(0);
  });

  it("another drive's key gets 404 and changes nothing", async () => {
    const { session, parts } = await uploaded();

    await expect(completeUpload(deps, 'e', session.id, parts)).rejects.toMatchObject({ code: 'not_found' });
    await expect(abortUpload(deps, 'e', session.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(sessions.sessions.get(session.id)?.claimedUntil).toBeUndefined();
    expect(storage.uploads.has(session.multipartId)).toBe(true);
  });
});

describe('Functions: startUpload and completeUpload, with a condition (if_match, if_none_match)', () => {
  const seed = (etag: string): FileNode => ({ kind: 'file', id: `seed-${etag}`, path: '/dir/big.bin', size: 3, contentType: 'x', createdAt: 'then', objectKey: `d/seed-${etag}`, etag });
  const beforeStart = () => {
    nodes.items.set('/dir', { kind: 'folder', id: 'dir', path: '/dir', createdAt: 'then' });
    nodes.items.set('/dir/big.bin', seed('v0'));
  };
  const startWith = (condition: WriteCondition) => startUpload(deps, 'd', { path: '/dir/big.bin', size: 10 * MiB, condition }, limits);
  /** Starts with `condition` and sends both parts. */
  async function sentWith(condition: WriteCondition) {
    const { session } = await startWith(condition);
    const parts = [
      { number: 1, etag: storage.putPart(session.multipartId, 1, 8 * MiB) },
      { number: 2, etag: storage.putPart(session.multipartId, 2, 2 * MiB) },
    ];
    return { session, parts };
  }

  it('a condition the file there already fails is a 412 at the start, naming the path: no multipart upload, no session', async () => {
    beforeStart();
    await expect(startWith({ ifMatch: 'stale' })).rejects.toMatchObject({
      code: 'precondition_failed',
      paths: ['/dir/big.bin'],
      message: 'the condition failed for /dir/big.bin (if_match "stale": no file with that ETag is there); nothing of this upload is stored',
    });
    await expect(startWith({ ifNoneMatch: '*' })).rejects.toMatchObject({ code: 'precondition_failed', message: 'the condition failed for /dir/big.bin (if_none_match "*": a file is there); nothing of this upload is stored' });
    expect(storage.uploads.size).toBe(0);
    expect(sessions.sessions.size).toBe(0);
  });

  it('adds no call: a conditional start and completion read and write the nodes as an unconditional one does', async () => {
    const counted = async (condition?: WriteCondition) => {
      nodes = new MemoryNodes();
      deps = { ...deps, nodes };
      beforeStart();
      const get = jest.spyOn(nodes, 'get');
      const getMany = jest.spyOn(nodes, 'getMany');
      const putFile = jest.spyOn(nodes, 'putFile');
      const { session } = await startUpload(deps, 'd', { path: '/dir/big.bin', size: 10 * MiB, ...(condition ? { condition } : {}) }, limits);
      const parts = [
        { number: 1, etag: storage.putPart(session.multipartId, 1, 8 * MiB) },
        { number: 2, etag: storage.putPart(session.multipartId, 2, 2 * MiB) },
      ];
      await completeUpload(deps, 'd', session.id, parts);
      return [get.mock.calls.length, getMany.mock.calls.length, putFile.mock.calls.length];
    };
    const plain = await counted();
    expect(plain[2]).toBe(1);
    expect(await counted({ ifMatch: 'v0' })).toEqual(plain);
  });

  it('a folder at the path stays the 409 it was, before the condition', async () => {
    nodes.items.set('/dir/big.bin', { kind: 'folder', id: 'f', path: '/dir/big.bin', createdAt: 'then' });
    await expect(startWith({ ifMatch: 'v0' })).rejects.toMatchObject({ code: 'conflict' });
  });

  it('keeps the condition in the session; met at completion, the file replaces the version it named', async () => {
    beforeStart();
    const { session, parts } = await sentWith({ ifMatch: 'v0' });
    expect(sessions.sessions.get(session.id)?.session.condition).toEqual({ ifMatch: 'v0' });
    await expect(completeUpload(deps, 'd', session.id, parts)).resolves.toMatchObject({ id: session.fileId });
    expect(nodes.items.get('/dir/big.bin')?.id).toBe(session.fileId);
  });

  it('a file replaced after the start is a 412 before assembly: the parts are deleted and the session ends', async () => {
    beforeStart();
    const { session, parts } = await sentWith({ ifMatch: 'v0' });
    nodes.items.set('/dir/big.bin', seed('v1'));

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toMatchObject({ code: 'precondition_failed', paths: ['/dir/big.bin'] });
    expect(nodes.items.get('/dir/big.bin')?.id).toBe('seed-v1');
    expect(storage.uploads.size).toBe(0);
    expect(storage.objects.size).toBe(0);
    expect(sessions.sessions.size).toBe(0);
  });

  it.each([
    ['if_match', { ifMatch: 'v0' }, () => nodes.items.set('/dir/big.bin', seed('v1'))],
    ['if_none_match', { ifNoneMatch: '*' }, () => nodes.items.set('/dir/big.bin', seed('v1'))],
  ] as [string, WriteCondition, () => void][])(
    '%s: a file written between the check before assembly and the record write is a 412 held by the write: the assembled object is deleted and the session ends',
    async (_name, condition, rival) => {
      if ('ifMatch' in condition) beforeStart();
      else nodes.items.set('/dir', { kind: 'folder', id: 'dir', path: '/dir', createdAt: 'then' });
      const { session, parts } = await sentWith(condition);
      nodes.beforePut = () => {
        nodes.beforePut = undefined;
        rival();
      };

      await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toMatchObject({ code: 'precondition_failed', paths: ['/dir/big.bin'] });
      expect(nodes.items.get('/dir/big.bin')?.id).toBe('seed-v1');
      expect(storage.objects.has(session.objectKey)).toBe(false);
      expect(sessions.sessions.size).toBe(0);
      // Ended: a retry finds no session.
      await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toMatchObject({ code: 'not_found' });
    },
  );

  it('a retry after a failure past assembly is judged again, and finds a file written meanwhile', async () => {
    beforeStart();
    const { session, parts } = await sentWith({ ifMatch: 'v0' });
    nodes.failPuts = 1; // the first record write fails; the object is assembled and kept for the retry
    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toThrow('throttled');
    expect(storage.objects.has(session.objectKey)).toBe(true);
    nodes.items.set('/dir/big.bin', seed('v1'));

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toMatchObject({ code: 'precondition_failed' });
    expect(storage.objects.has(session.objectKey)).toBe(false);
    expect(sessions.sessions.size).toBe(0);
  });

  it('for a key that may not replace, an if_none_match completion refused by a file stays the 409 it always was', async () => {
    nodes.items.set('/dir', { kind: 'folder', id: 'dir', path: '/dir', createdAt: 'then' });
    const { session, parts } = await sentWith({ ifNoneMatch: '*' });
    nodes.items.set('/dir/big.bin', seed('v1'));
    await expect(completeUpload(deps, 'd', session.id, parts, () => true, { replace: false })).rejects.toMatchObject({ code: 'conflict' });
  });
});

describe('Function: abortUpload', () => {
  it('leaves an object that a failed completion assembled to the consistency check, the session and parts gone', async () => {
    const { session, parts } = await uploaded();
    nodes.failPuts = 1;
    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toThrow('throttled');

    await abortUpload(deps, 'd', session.id);

    // An abort cannot tell this object from one a completion stored and answered 200 for before failing to end
    // its session, whose file may have moved or gone into the trash since: the check deletes it once nothing names it.
    expect([...storage.objects.keys()]).toEqual([session.objectKey]);
    expect(sessions.sessions.size).toBe(0);
    expect(nodes.items.has('/dir/big.bin')).toBe(false);
  });
});

describe('Function: completeUpload, tried again after its record was saved', () => {
  it('for a key that may not replace, a retry that finds its own record keeps the file\'s bytes', async () => {
    // Prepare: an upload-only key's completion writes the record, then its function dies before it ends the
    // session (the session's remove never happens); its claim lapses, and the client, which got no answer,
    // completes again
    const { session, parts } = await uploaded();
    const remove = jest.spyOn(sessions, 'remove').mockRejectedValueOnce(new Error('function stopped'));
    const first = await completeUpload(deps, 'd', session.id, parts, () => true, { replace: false });
    remove.mockRestore();
    sessions.sessions.get(session.id)!.claimedUntil = undefined; // the dead holder's claim lapsed
    expect(nodes.items.get('/dir/big.bin')).toEqual(first);

    // Act
    const retry = await completeUpload(deps, 'd', session.id, parts, () => true, { replace: false }).then(
      (file) => file.id,
      (error: { code?: string }) => error.code,
    );

    // Assess: the record at the path is the upload's own (its id is the session's file id), which passes as
    // `holds` lets it pass a condition: the retry answers the file, and the recorded file keeps its bytes
    expect(nodes.items.get('/dir/big.bin')?.id).toBe(session.fileId);
    expect({ retry, bytes: storage.objects.has(session.objectKey) }).toEqual({ retry: session.fileId, bytes: true });
  });
});
