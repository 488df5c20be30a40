import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { ROOT, nameOf, parentOf } from '../../functions/core/paths';
import { fileMember, fileRow, restorable, restoredRecord } from '../../functions/core/trash';
import {
  type BackgroundEntry,
  type ByteRange,
  type DeleteMark,
  type DriveNode,
  type FileNode,
  type FileRecords,
  type FolderNode,
  type Job,
  type JobQueue,
  type JobStore,
  type JournalEntry,
  type MembersExpectation,
  type MembersOutcome,
  MAX_FILES_PER_REMOVE,
  type MoveExpectation,
  type MoveOutcome,
  type NodeStore,
  type ObjectCopier,
  type ObjectStore,
  type PutFileResult,
  type RemoveCondition,
  type RestoreExpectation,
  type RestoreOutcome,
  MAX_FILES_PER_TRASH,
  type TrashInto,
  type TrashMember,
  type TrashNote,
  type TrashRow,
  type TrashStamp,
  type TrashStore,
  type WriteCondition,
  type UploadJournal,
  type WithdrawnNote,
  type MultipartStore,
  type UploadSession,
  type UploadSessionStore,
} from '../../functions/core/ports';

// The ports in memory, with the conditions of the DynamoDB and S3 adapters (functions/aws/), written as
// plain checks: every method is one atomic step (JavaScript runs it to its end), as each DynamoDB write is
// one conditional write or one transaction. A test wraps the methods to decide when each step happens
// (`gatePorts`). Nodes are copied in and out, so no caller holds a stored object.

const copy = <T extends object>(value: T): T => ({ ...value });

/** DynamoDB orders a partition's sort keys by their UTF-8 bytes. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** The nodes table: one map per partition (`<drive>#<parent path>`), by name. */
export class MemoryNodeStore implements NodeStore {
  readonly partitions = new Map<string, Map<string, DriveNode>>();

  private partition(drive: string, folder: string, make = false): Map<string, DriveNode> | undefined {
    const key = `${drive}#${folder}`;
    let found = this.partitions.get(key);
    if (!found && make) this.partitions.set(key, (found = new Map()));
    return found;
  }

  /** The stored node at `path` itself (not a copy): for the adapters in this file only. */
  peek(drive: string, path: string): DriveNode | undefined {
    if (path === ROOT) return undefined;
    return this.partition(drive, parentOf(path))?.get(nameOf(path));
  }

  /** Stores `node` as it is (a test's seed, or a transaction's write). */
  write(drive: string, node: DriveNode): void {
    this.partition(drive, parentOf(node.path), true)!.set(nameOf(node.path), copy(node));
  }

  remove(drive: string, path: string): void {
    const partition = this.partition(drive, parentOf(path));
    partition?.delete(nameOf(path));
    if (partition?.size === 0) this.partitions.delete(`${drive}#${parentOf(path)}`);
  }

  /** The stored file records (not copies), for checks made at every step. */
  *storedFiles(): Generator<FileNode> {
    for (const partition of this.partitions.values()) for (const node of partition.values()) if (node.kind === 'file') yield node;
  }

  /** Every node of `drive`. */
  all(drive: string): DriveNode[] {
    return [...this.partitions.entries()].filter(([key]) => key.startsWith(`${drive}#`)).flatMap(([, nodes]) => [...nodes.values()].map(copy));
  }

  async get(drive: string, path: string): Promise<DriveNode | undefined> {
    const node = this.peek(drive, path);
    return node && copy(node);
  }

  async getMany(drive: string, paths: readonly string[]): Promise<Map<string, DriveNode>> {
    const found = new Map<string, DriveNode>();
    for (const path of paths) {
      const node = this.peek(drive, path);
      if (node) found.set(path, copy(node));
    }
    return found;
  }

  async children(drive: string, folder: string): Promise<DriveNode[]> {
    return (await this.childrenPage(drive, folder, Number.MAX_SAFE_INTEGER)).nodes;
  }

  async childrenPage(drive: string, folder: string, limit: number, after?: string): Promise<{ nodes: DriveNode[]; last?: string }> {
    const names = [...(this.partition(drive, folder)?.keys() ?? [])].sort(byBytes).filter((name) => after === undefined || byBytes(name, after) > 0);
    const page = names.slice(0, limit).map((name) => copy(this.partition(drive, folder)!.get(name)!));
    return names.length > limit ? { nodes: page, last: nameOf(page.at(-1)!.path) } : { nodes: page };
  }

  async hasChildren(drive: string, folder: string): Promise<boolean> {
    return (this.partition(drive, folder)?.size ?? 0) > 0;
  }

  async createFolder(drive: string, folder: FolderNode): Promise<FolderNode | undefined> {
    const held = this.peek(drive, folder.path);
    // A marked folder only where nothing stands; an unmarked one leaves a folder there as it is.
    if (folder.moving) {
      // `movedFrom` is the DynamoDB item's note for the change feed, never read back.
      const { movedFrom: _, ...stored } = folder;
      if (!held) this.write(drive, stored);
      return held ? (held.kind === 'folder' ? copy(held) : undefined) : copy(stored);
    }
    if (held?.kind === 'file') return undefined;
    if (held) return copy(held);
    this.write(drive, folder);
    return copy(folder);
  }

  async keepFolder(drive: string, folder: FolderNode): Promise<FolderNode | undefined> {
    const held = this.peek(drive, folder.path);
    if (held?.kind !== 'folder' || held.id !== folder.id) return undefined;
    held.kept = true;
    return copy(held);
  }

  async putFile(drive: string, file: FileNode, options: { replace?: boolean; condition?: WriteCondition } = {}): Promise<PutFileResult> {
    const held = this.peek(drive, file.path);
    const { condition } = options;
    // As the DynamoDB adapter's `putCondition`: a request's condition stands for `replace`; the write's own record always passes.
    const allowed =
      condition && 'ifMatch' in condition
        ? held?.id === file.id || (held?.kind === 'file' && held.etag === condition.ifMatch)
        : condition || options.replace === false
          ? !held || held.id === file.id
          : !held || held.kind === 'file';
    if (!allowed) return condition ? { ok: false, precondition: true } : { ok: false };
    this.write(drive, file);
    return { ok: true, replaced: held?.kind === 'file' && held.id !== file.id ? copy(held) : undefined };
  }

  async removeIfSame(drive: string, path: string, id: string, only?: RemoveCondition): Promise<boolean> {
    const held = this.peek(drive, path);
    if (held?.id !== id) return false;
    const marks: { deleting?: DeleteMark; moving?: string; kept?: true } = held.kind === 'folder' ? held : {};
    if (only && 'unmarked' in only && (marks.deleting !== undefined || marks.moving !== undefined || marks.kept)) return false;
    if (only && 'movingJob' in only && marks.moving !== only.movingJob) return false;
    this.remove(drive, path);
    return true;
  }

  async restoreIfSame(drive: string, path: string, id: string, previous: DriveNode): Promise<boolean> {
    if (this.peek(drive, path)?.id !== id) return false;
    this.write(drive, previous);
    return true;
  }

  async markDeleting(drive: string, folder: FolderNode, mark: DeleteMark, only?: { unmarked: true }): Promise<FolderNode | undefined> {
    const held = this.peek(drive, folder.path);
    if (held?.kind !== 'folder' || held.id !== folder.id) return undefined;
    if (only?.unmarked) {
      if (held.deleting !== undefined || held.moving !== undefined || held.kept) return undefined;
      held.deleting = mark;
      return copy(held);
    }
    const allowed = held.moving === undefined && (mark === 'recursive' || held.deleting === undefined || held.deleting === mark);
    if (allowed) held.deleting = mark;
    return copy(held);
  }

  async markMoving(drive: string, folder: FolderNode, job: string): Promise<FolderNode | undefined> {
    const held = this.peek(drive, folder.path);
    if (held?.kind !== 'folder' || held.id !== folder.id || held.deleting !== undefined || (held.moving !== undefined && held.moving !== job)) return undefined;
    held.moving = job;
    return copy(held);
  }

  async unmarkMoving(drive: string, folder: FolderNode, job: string, _ended?: 'stopped'): Promise<boolean> {
    const held = this.peek(drive, folder.path);
    if (held?.id !== folder.id || held.kind !== 'folder' || held.moving !== job) return false;
    delete held.moving;
    return true;
  }

  async unmarkDeleting(drive: string, folder: FolderNode): Promise<boolean> {
    const held = this.peek(drive, folder.path);
    if (held?.id !== folder.id || held.kind !== 'folder' || held.deleting !== 'empty') return false;
    delete held.deleting;
    return true;
  }

  async removeFolder(drive: string, folder: FolderNode): Promise<boolean> {
    const held = this.peek(drive, folder.path);
    if (held?.id !== folder.id || held.kind !== 'folder' || held.deleting === undefined) return false;
    this.remove(drive, folder.path);
    return true;
  }
}

/** The upload journal: open entries by id (`journal#<uuid>`, as the adapter names them). */
export class MemoryUploadJournal implements UploadJournal {
  readonly entries = new Map<string, JournalEntry>();
  /** The open entries noted withdrawn, with their notes (the adapter's `withdrawn` and `replaced` attributes). */
  readonly withdrawn = new Map<string, WithdrawnNote>();
  /** The bytes each open entry's writer left to the sweep (the adapter's `left` attribute). */
  readonly left = new Map<string, { path: string; objectKey: string }[]>();
  /** Trash notes (`trashnote#<entry>#<key>` items): which trash item holds a key an entry names. */
  readonly notes = new Map<string, TrashNote>();

  /** Notes that the trash item `note` holds `objectKey`, which the entry `entry` names (a write into the trash of a pending record). */
  note(entry: string, objectKey: string, note: TrashNote): void {
    this.notes.set(`${entry}#${objectKey}`, { ...note });
  }

  async trashNotes(entry: string, keys: readonly string[]): Promise<Map<string, TrashNote>> {
    const found = new Map<string, TrashNote>();
    for (const key of keys) {
      const note = this.notes.get(`${entry}#${key}`);
      if (note) found.set(key, { ...note });
    }
    return found;
  }

  /** Opens one entry naming `files` (what a `FileRecords` transaction puts); returns its id. */
  add(drive: string, files: readonly { path: string; objectKey: string }[], sweepAfter: Date, by?: string): string {
    const id = `journal#${randomUUID()}`;
    this.entries.set(id, { id, drive, files: files.map(({ path, objectKey }) => ({ path, objectKey })), sweepAfter: sweepAfter.toISOString(), ...(by !== undefined ? { createdBy: by } : {}) });
    return id;
  }

  async open(drive: string, files: readonly { path: string; objectKey: string }[], sweepAfter: Date, by?: string): Promise<string[]> {
    const id = this.add(drive, files, sweepAfter, by);
    return files.map(() => id);
  }

  async close(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      this.entries.delete(id);
      this.withdrawn.delete(id);
      this.left.delete(id);
    }
  }

  async due(now: Date): Promise<JournalEntry[]> {
    // Newest first: a DynamoDB Scan returns items in its hash order, not the order they were opened in, so the
    // sweep must not rely on that (and the model stays deterministic, which random ids in hash order are not).
    return [...this.entries.values()]
      .reverse()
      .filter((entry) => Date.parse(entry.sweepAfter) <= now.getTime())
      .map((entry) => {
        const note = this.withdrawn.get(entry.id);
        const left = this.left.get(entry.id);
        return { ...entry, files: [...entry.files], ...(note ? { withdrawn: true as const, replaced: [...note.replaced] } : {}), ...(left ? { left: [...left] } : {}) };
      });
  }

  async openKeys(): Promise<string[]> {
    return [...this.entries.values()].flatMap((entry) => [...entry.files, ...(this.left.get(entry.id) ?? [])].map((file) => file.objectKey));
  }

  async withdraw(ids: readonly string[], replaced: readonly (FileNode | undefined)[] = []): Promise<void> {
    // Only on an entry still open, as the adapter's condition (attribute_exists) has it; the note is written whole.
    for (const id of new Set(ids)) {
      if (!this.entries.has(id)) continue;
      this.withdrawn.set(id, { replaced: ids.flatMap((other, i) => (other === id && replaced[i] ? [{ ...replaced[i] }] : [])) });
    }
  }

  async withdrew(id: string): Promise<WithdrawnNote | undefined> {
    const note = this.entries.has(id) ? this.withdrawn.get(id) : undefined;
    return note && { replaced: note.replaced.map((record) => ({ ...record })) };
  }

  async leave(ids: readonly string[], files: readonly ({ path: string; objectKey: string } | undefined)[]): Promise<void> {
    for (const id of new Set(ids)) {
      const named = ids.flatMap((other, i) => (other === id && files[i] ? [{ path: files[i].path, objectKey: files[i].objectKey }] : []));
      if (!this.entries.has(id) || named.length === 0) continue;
      this.left.set(id, [...(this.left.get(id) ?? []), ...named]);
    }
  }
}

/**
 * `FileRecords` over the memory node store and journal, each method all or nothing: every condition is
 * checked before anything is written, and the first that fails (in the adapter's order of transaction
 * items) is the one reported. `pendingItems` tells whether an uploads-table item (a journal entry, or a large
 * upload's session) still stands under an id.
 */
export class MemoryFileRecords implements FileRecords {
  constructor(
    private readonly nodes: MemoryNodeStore,
    private readonly journal: MemoryUploadJournal,
    private readonly otherItems: (id: string) => boolean = () => false,
    private readonly trash: MemoryTrashStore = new MemoryTrashStore(),
  ) {}

  async move(drive: string, file: FileNode, to: string, expected: MoveExpectation): Promise<MoveOutcome> {
    const atDestination = this.nodes.peek(drive, to);
    if (expected.replacing ? atDestination?.id !== expected.replacing.id : atDestination !== undefined) return { moved: false, changed: 'destination' };
    if (this.nodes.peek(drive, file.path)?.id !== file.id) return { moved: false, changed: 'source' };
    const parents = new Map([expected.sourceParent, expected.destinationParent].filter((folder) => folder !== undefined).map((folder) => [folder.path, folder]));
    for (const folder of parents.values()) {
      if (!this.standing(drive, folder, expected.job)) return { moved: false, changed: 'folders' };
    }
    if (file.pending && (this.journal.entries.has(file.pending) || this.otherItems(file.pending))) return { moved: false, changed: 'pending' };
    const { pending: _, ...moved } = { ...file, path: to, movedAt: new Date().toISOString() };
    this.nodes.write(drive, moved);
    this.nodes.remove(drive, file.path);
    if (!expected.replacing) return { moved: true };
    if (expected.trash) return { moved: true, trashed: this.trashRow(drive, expected.replacing, expected.trash) };
    return { moved: true, journal: this.journal.add(drive, [expected.replacing], expected.sweepAfter) };
  }

  async removeMany(drive: string, files: readonly FileNode[], sweepAfter: Date): Promise<{ entry: string } | { changed: FileNode[] }> {
    if (files.length < 1 || files.length > MAX_FILES_PER_REMOVE) throw new RangeError(`removeMany takes 1 to ${MAX_FILES_PER_REMOVE} files (got ${files.length})`);
    const changed = files.filter((file) => this.nodes.peek(drive, file.path)?.id !== file.id);
    if (changed.length > 0) return { changed };
    for (const file of files) this.nodes.remove(drive, file.path);
    return { entry: this.journal.add(drive, files, sweepAfter) };
  }

  async trashMany(drive: string, files: readonly FileNode[], into: TrashInto): Promise<{ trashed: TrashRow[] } | { changed: FileNode[] }> {
    if (files.length < 1 || files.length > MAX_FILES_PER_TRASH) throw new RangeError(`trashMany takes 1 to ${MAX_FILES_PER_TRASH} files (got ${files.length})`);
    const changed = files.filter((file) => this.nodes.peek(drive, file.path)?.id !== file.id);
    if (changed.length > 0) return { changed };
    // A folder's members go into a row that stands filling (the adapter's ConditionCheck on the row).
    if ('folder' in into && this.trash.peek(drive, into.folder.id)?.state !== 'filling') return { changed: [...files] };
    const trashed: TrashRow[] = [];
    if ('back' in into) {
      // A withdrawing restore: the row as it was, unclaimed, with its due entry (the adapter's Put, unconditional: its id was removed by the restore).
      const { restoring: _, purging: __, claimedAt: ___, ...row } = into.back;
      if (into.putBack) {
        // What the restore overwrote, back at the path in the same write: only while its row stands restorable
        // and unclaimed (the adapter's condition on the row's delete).
        const held = this.trash.peek(drive, into.putBack.row.id);
        if (!held?.file || held.state !== 'trashed' || held.purging !== undefined || held.restoring !== undefined || !restorable(held, into.putBack.now)) return { changed: [...files] };
        if (held.file.path !== files[0].path) throw new RangeError(`a restore puts back only what stood at ${files[0].path} (got ${held.file.path})`);
        this.nodes.write(drive, held.file);
        this.trash.drop(drive, held.id);
      } else this.nodes.remove(drive, files[0].path);
      this.trash.writeRow(drive, row, true);
      if (row.file?.pending) this.journal.note(row.file.pending, row.file.objectKey, { drive, id: row.id });
      return { trashed: [{ ...row }] };
    }
    for (const file of files) {
      this.nodes.remove(drive, file.path);
      if ('rows' in into) trashed.push(this.trashRow(drive, file, into.rows));
      else {
        const member = fileMember(into.folder, file);
        this.trash.writeMember(drive, into.folder.id, member);
        if (file.pending) this.journal.note(file.pending, file.objectKey, { drive, id: into.folder.id, relative: member.relative });
      }
    }
    return { trashed };
  }

  async restore(drive: string, row: TrashRow, to: string, expected: RestoreExpectation): Promise<RestoreOutcome> {
    const atDestination = this.nodes.peek(drive, to);
    if (expected.replacing ? atDestination?.id !== expected.replacing.id : atDestination !== undefined) return { restored: false, changed: 'destination' };
    if (expected.parent && !this.standing(drive, expected.parent)) return { restored: false, changed: 'folders' };
    const held = this.trash.peek(drive, row.id);
    const claimOk = held !== undefined && held.purging === undefined && held.restoring === expected.job;
    if (!held || !claimOk || held.state !== 'trashed' || !restorable(held, expected.now) || !held.file) return { restored: false, changed: 'item' };
    const movedAt = to === held.path ? held.file.movedAt : expected.now.toISOString();
    const { movedAt: _, ...record } = held.file;
    const file: FileNode = { ...record, path: to, ...(movedAt ? { movedAt } : {}) };
    this.nodes.write(drive, file);
    this.trash.drop(drive, row.id);
    if (!expected.replacing) return { restored: true, file };
    return { restored: true, file, replaced: this.trashRow(drive, expected.replacing, expected.stamp ?? { ...row, reason: 'replaced' }) };
  }

  async keepReplaced(drive: string, files: readonly FileNode[], stamp: TrashStamp, options: { once?: boolean } = {}): Promise<TrashRow[]> {
    if (files.length < 1 || files.length > MAX_FILES_PER_TRASH) throw new RangeError(`keepReplaced takes 1 to ${MAX_FILES_PER_TRASH} files (got ${files.length})`);
    // The adapter's `once`: a file whose pending record's note stands gets no row; the others are written.
    const noted = (file: FileNode) => options.once === true && file.pending !== undefined && this.journal.notes.has(`${file.pending}#${file.objectKey}`);
    return files.filter((file) => !noted(file)).map((file) => this.trashRow(drive, file, stamp));
  }

  async restoreMembers(drive: string, row: TrashRow, files: readonly { member: TrashMember; to: string }[], expected: MembersExpectation): Promise<MembersOutcome> {
    if (files.length < 1 || files.length > MAX_FILES_PER_TRASH) throw new RangeError(`restoreMembers takes 1 to ${MAX_FILES_PER_TRASH} files (got ${files.length})`);
    const members = this.trash.memberItems.get(`${drive}#${row.id}`);
    // The adapter's order of items: each file's record and member, then the parents, then the row.
    const taken = files.flatMap(({ member, to }, i) => (this.nodes.peek(drive, to) !== undefined || !members?.get(member.relative)?.file ? [i] : []));
    const held = this.trash.peek(drive, row.id);
    if (!held || held.state !== 'trashed' || held.purging !== undefined || held.restoring !== expected.job || !restorable(held, expected.now)) return { restored: false, changed: 'item' };
    if (expected.parents.some((folder) => !this.standing(drive, folder))) return { restored: false, changed: 'folders' };
    if (taken.length > 0) return { restored: false, taken };
    const written = files.map(({ member, to }) => restoredRecord(held, member, to, expected.now));
    for (const record of written) this.nodes.write(drive, record);
    await this.trash.removeMembers(drive, row.id, files.map(({ member }) => member.relative));
    return { restored: written };
  }

  /** A row (and due entry) for `file`, with its pending record's note: a part of the caller's write. */
  private trashRow(drive: string, file: FileNode, stamp: Parameters<typeof fileRow>[1]): TrashRow {
    const row = fileRow(file, { reason: stamp.reason, deletedAt: stamp.deletedAt, purgeAt: stamp.purgeAt, ...(stamp.deletedBy ? { deletedBy: stamp.deletedBy } : {}) });
    this.trash.writeRow(drive, row, true);
    if (file.pending) this.journal.note(file.pending, file.objectKey, { drive, id: row.id });
    return { ...row };
  }

  /** The folder stands with its id, unmarked (but by the move `job`). */
  private standing(drive: string, folder: FolderNode, job?: string): boolean {
    const held = this.nodes.peek(drive, folder.path);
    return held?.kind === 'folder' && held.id === folder.id && held.deleting === undefined && (held.moving === undefined || (job !== undefined && held.moving === job));
  }
}

/**
 * The trash's items in the nodes table: rows (`<drive>#trash`, by id), members (`<drive>#trash#<id>`, by relative
 * path), due entries (by purge time), with the adapter's conditions.
 */
export class MemoryTrashStore implements TrashStore {
  readonly rows = new Map<string, Map<string, TrashRow>>();
  readonly memberItems = new Map<string, Map<string, TrashMember>>();
  /** Due entries by `<purgeAt>#<drive>#<id>`. */
  readonly dueEntries = new Map<string, { drive: string; id: string; purgeAt: string }>();

  /** The stored row (not a copy). */
  peek(drive: string, id: string): TrashRow | undefined {
    return this.rows.get(drive)?.get(id);
  }

  writeRow(drive: string, row: TrashRow, due: boolean): void {
    const rows = this.rows.get(drive) ?? new Map<string, TrashRow>();
    rows.set(row.id, { ...row, ...(row.file ? { file: { ...row.file } } : {}) });
    this.rows.set(drive, rows);
    if (due) this.dueEntries.set(`${row.purgeAt}#${drive}#${row.id}`, { drive, id: row.id, purgeAt: row.purgeAt });
  }

  writeMember(drive: string, id: string, member: TrashMember): void {
    const key = `${drive}#${id}`;
    const members = this.memberItems.get(key) ?? new Map<string, TrashMember>();
    members.set(member.relative, { ...member });
    this.memberItems.set(key, members);
  }

  /** Removes a row and its due entry (its members stay: a purge removes them first). */
  drop(drive: string, id: string): void {
    const row = this.peek(drive, id);
    if (!row) return;
    this.rows.get(drive)!.delete(id);
    this.dueEntries.delete(`${row.purgeAt}#${drive}#${id}`);
  }

  /** Every row of `drive` (copies), and every member of each, for the checks. */
  all(drive: string): { row: TrashRow; members: TrashMember[] }[] {
    return [...(this.rows.get(drive)?.values() ?? [])].map((row) => ({ row: { ...row }, members: [...(this.memberItems.get(`${drive}#${row.id}`)?.values() ?? [])] }));
  }

  /** Every object key a row or member names, with what names it. */
  *namedKeys(): Generator<[string, string]> {
    for (const [drive, rows] of this.rows) {
      for (const row of rows.values()) {
        if (row.file) yield [row.file.objectKey, `trash row ${row.id} (${row.path})`];
        for (const member of this.memberItems.get(`${drive}#${row.id}`)?.values() ?? []) if (member.file) yield [member.file.objectKey, `trash member ${row.path}/${member.relative}`];
      }
    }
    for (const [key, members] of this.memberItems) {
      const [drive, id] = [key.slice(0, key.indexOf('#')), key.slice(key.indexOf('#') + 1)];
      if (this.peek(drive, id)) continue;
      for (const member of members.values()) if (member.file) yield [member.file.objectKey, `trash member ${member.relative} of a row gone`];
    }
  }

  async get(drive: string, id: string): Promise<TrashRow | undefined> {
    const row = this.peek(drive, id);
    return row && { ...row };
  }

  async list(drive: string, limit: number, after?: string): Promise<{ rows: TrashRow[]; last?: string }> {
    const ids = [...(this.rows.get(drive)?.keys() ?? [])].sort(byBytes).reverse().filter((id) => after === undefined || byBytes(id, after) < 0);
    const rows = ids.slice(0, limit).map((id) => ({ ...this.peek(drive, id)! }));
    return ids.length > limit ? { rows, last: rows.at(-1)!.id } : { rows };
  }

  async members(drive: string, id: string, limit: number, after?: string): Promise<{ members: TrashMember[]; last?: string }> {
    const all = this.memberItems.get(`${drive}#${id}`) ?? new Map<string, TrashMember>();
    const names = [...all.keys()].sort(byBytes).filter((name) => after === undefined || byBytes(name, after) > 0);
    const members = names.slice(0, limit).map((name) => ({ ...all.get(name)! }));
    return names.length > limit ? { members, last: members.at(-1)!.relative } : { members };
  }

  async begin(drive: string, row: TrashRow): Promise<void> {
    if (!this.peek(drive, row.id)) this.writeRow(drive, row, false);
  }

  async abandon(drive: string, id: string): Promise<boolean> {
    if (this.peek(drive, id)?.state !== 'filling' || (this.memberItems.get(`${drive}#${id}`)?.size ?? 0) > 0) return false;
    this.drop(drive, id);
    return true;
  }

  async putMember(drive: string, id: string, member: TrashMember): Promise<void> {
    this.writeMember(drive, id, member);
  }

  async filled(drive: string, id: string, counts: { files: number; bytes: number; purgeAt: string }): Promise<boolean> {
    const row = this.peek(drive, id);
    if (row?.state !== 'filling') return row?.state === 'trashed' && row.purgeAt === counts.purgeAt;
    this.writeRow(drive, { ...row, ...counts, state: 'trashed' }, true);
    return true;
  }

  async claim(drive: string, id: string, kind: 'purge' | 'restore', by: string, now: Date, leaseMs: number): Promise<TrashRow | undefined> {
    const row = this.peek(drive, id);
    if (!row || row.state !== 'trashed') return undefined;
    const free = row.purging === undefined && row.restoring === undefined;
    const own = kind === 'restore' ? row.purging === undefined && row.restoring === by : row.restoring === undefined && row.purging !== undefined && (row.purging === by || Date.parse(row.claimedAt ?? '') + leaseMs < now.getTime());
    if (!free && !own) return undefined;
    if (kind === 'purge') {
      row.purging = by;
      // Due now, with a due entry of its own (the adapter's PutItem beside the claim): a purge that dies is the sweep's.
      if (Date.parse(row.purgeAt) > now.getTime()) row.purgeAt = now.toISOString();
      this.dueEntries.set(`${row.purgeAt}#${drive}#${id}`, { drive, id, purgeAt: row.purgeAt });
    } else row.restoring = by;
    row.claimedAt = now.toISOString();
    return { ...row };
  }

  async release(drive: string, id: string, by: string, counts?: { files: number; bytes: number }): Promise<boolean> {
    const row = this.peek(drive, id);
    if (row?.restoring !== by) return false;
    delete row.restoring;
    delete row.claimedAt;
    if (counts) {
      Object.assign(row, counts);
      // The restore made the row's folder: its id is spent (the adapter's REMOVE).
      delete row.folderId;
    }
    return true;
  }

  async removeMembers(drive: string, id: string, relatives: readonly string[]): Promise<void> {
    const members = this.memberItems.get(`${drive}#${id}`);
    for (const relative of relatives) members?.delete(relative);
    if (members?.size === 0) this.memberItems.delete(`${drive}#${id}`);
  }

  async remove(drive: string, id: string, by: string): Promise<boolean> {
    const row = this.peek(drive, id);
    if (!row || (row.purging !== by && row.restoring !== by)) return false;
    this.drop(drive, id);
    return true;
  }

  async due(now: Date, limit: number): Promise<{ drive: string; id: string; purgeAt: string }[]> {
    return [...this.dueEntries.entries()]
      .sort(([a], [b]) => byBytes(a, b))
      .filter(([, entry]) => Date.parse(entry.purgeAt) <= now.getTime())
      .slice(0, limit)
      .map(([, entry]) => ({ ...entry }));
  }

  async dropDue(entry: { drive: string; id: string; purgeAt: string }): Promise<void> {
    this.dueEntries.delete(`${entry.purgeAt}#${entry.drive}#${entry.id}`);
  }
}

/** The bucket: bytes by key. `copy` answers the copy's MD5 as S3 gives a copy in one piece its ETag. */
export class MemoryObjectStore implements ObjectStore, ObjectCopier {
  readonly objects = new Map<string, { body: Buffer; contentType: string }>();
  /** Every key `put` stored, with its bytes (not copies): what each upload stored, for the checks. */
  readonly stored = new Map<string, string>();

  async put(key: string, body: Buffer, contentType: string): Promise<void> {
    this.objects.set(key, { body: Buffer.from(body), contentType });
    this.stored.set(key, body.toString());
  }

  async open(key: string, range?: ByteRange): Promise<{ body: Readable; size: number } | undefined> {
    const found = this.objects.get(key);
    if (!found) return undefined;
    const bytes = range ? found.body.subarray(range.start, range.end + 1) : found.body;
    return { body: Readable.from([bytes]), size: bytes.length };
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.objects.delete(key);
  }

  async copy(from: string, to: string, _size: number): Promise<string | undefined> {
    const found = this.objects.get(from);
    if (!found) return undefined;
    this.objects.set(to, { body: Buffer.from(found.body), contentType: found.contentType });
    return createHash('md5').update(found.body).digest('hex');
  }
}

type StoredJob = Job & { claimedUntil?: number };

/** Jobs and each drive's list of background jobs, with the claims of `functions/aws/claims.ts`. */
export class MemoryJobStore implements JobStore {
  readonly jobs = new Map<string, StoredJob>();
  readonly background = new Map<string, Map<string, string | undefined>>();

  constructor(private readonly now: () => number = Date.now) {}

  async create(job: Job): Promise<void> {
    if (this.jobs.has(job.id)) throw new Error(`job ${job.id} exists`);
    const { ended: _, ...stored } = job;
    this.jobs.set(job.id, stored);
  }

  async get(drive: string, id: string): Promise<Job | undefined> {
    const job = this.jobs.get(id);
    return job?.drive === drive ? withoutClaim(job) : undefined;
  }

  async claim(drive: string, id: string, leaseMs: number): Promise<Job | 'busy' | undefined> {
    const job = this.jobs.get(id);
    if (job?.drive !== drive) return undefined;
    const now = this.now();
    if (job.claimedUntil !== undefined && job.claimedUntil >= now) return 'busy';
    job.claimedUntil = now + leaseMs;
    return withoutClaim(job);
  }

  async release(id: string): Promise<void> {
    const job = this.jobs.get(id);
    if (job) delete job.claimedUntil;
  }

  async advanced(id: string, files: number, cursor?: string, more?: { items: number; bytes: number }): Promise<void> {
    const job = this.existing(id);
    job.files += files;
    if (more) {
      job.items = (job.items ?? 0) + more.items;
      job.bytes = (job.bytes ?? 0) + more.bytes;
    }
    job.updatedAt = new Date(this.now()).toISOString();
    if (cursor !== undefined) job.cursor = cursor;
  }

  async finish(id: string, files: number, ended?: Job['ended']): Promise<void> {
    const job = this.existing(id);
    job.files += files;
    job.status = 'done';
    job.updatedAt = new Date(this.now()).toISOString();
    if (ended) job.ended = ended;
  }

  async stalled(before: Date): Promise<Job[]> {
    return [...this.jobs.values()].filter((job) => job.status === 'running' && job.updatedAt < before.toISOString()).map(withoutClaim);
  }

  async reserveBackground(job: Pick<Job, 'id' | 'drive'>, max: number): Promise<boolean> {
    const list = this.background.get(job.drive) ?? new Map<string, string | undefined>();
    if (list.size >= max) return false;
    list.set(job.id, new Date(this.now()).toISOString());
    this.background.set(job.drive, list);
    return true;
  }

  async toBackground(job: Pick<Job, 'id' | 'drive'>): Promise<void> {
    const list = this.background.get(job.drive) ?? new Map<string, string | undefined>();
    if (!list.has(job.id)) list.set(job.id, undefined);
    this.background.set(job.drive, list);
  }

  async fromBackground(job: Pick<Job, 'id' | 'drive'>): Promise<void> {
    this.background.get(job.drive)?.delete(job.id);
  }

  async inBackground(drive: string): Promise<BackgroundEntry[]> {
    return [...(this.background.get(drive) ?? new Map<string, string | undefined>()).entries()].map(([id, reservedAt]) => (reservedAt === undefined ? { id } : { id, reservedAt }));
  }

  /** An update of a job that is not there fails, as the adapter's conditional update does. */
  private existing(id: string): StoredJob {
    const job = this.jobs.get(id);
    if (!job) throw new Error(`ConditionalCheckFailed: no job ${id}`);
    return job;
  }
}

function withoutClaim(job: StoredJob): Job {
  const { claimedUntil: _, ...rest } = job;
  return rest;
}

/** The jobs queue: messages in the order sent; a test takes them (delays are not modelled: any order is allowed). */
export class MemoryJobQueue implements JobQueue {
  readonly messages: (Pick<Job, 'id' | 'drive'> & { delaySeconds?: number })[] = [];
  /** Called with each message as it is sent (a test may start a worker step at once). */
  onSend: (job: Pick<Job, 'id' | 'drive'>) => void = () => undefined;

  async send(job: Pick<Job, 'id' | 'drive'>, options: { delaySeconds?: number } = {}): Promise<void> {
    const message = { id: job.id, drive: job.drive, ...(options.delaySeconds ? { delaySeconds: options.delaySeconds } : {}) };
    this.messages.push(message);
    this.onSend(message);
  }

  take(): (Pick<Job, 'id' | 'drive'> & { delaySeconds?: number }) | undefined {
    return this.messages.shift();
  }
}

/** The time the memory ports go by: the machine's clock plus what a test moved it on (claims lapse by it). */
export class ModelClock {
  private offset = 0;
  now = (): number => Date.now() + this.offset;
  advance(ms: number): void {
    this.offset += ms;
  }
}

/** One drive's worth of every port, in memory, wired as the handlers wire the adapters. */
export function memoryPorts() {
  const nodes = new MemoryNodeStore();
  const journal = new MemoryUploadJournal();
  const trash = new MemoryTrashStore();
  const records = new MemoryFileRecords(nodes, journal, undefined, trash);
  const objects = new MemoryObjectStore();
  const clock = new ModelClock();
  const jobs = new MemoryJobStore(clock.now);
  const queue = new MemoryJobQueue();
  return { nodes, journal, records, objects, jobs, queue, clock, trash };
}

export type MemoryPorts = ReturnType<typeof memoryPorts>;

/**
 * `ports` with every method of every port made to wait for `gate()` before it acts: a scheduler (fast-check's
 * `fc.scheduler()`) then decides the order in which the calls in flight take effect. The memory stores stay
 * reachable as they are, for the checks.
 */
export function gatePorts<T extends Record<string, object>>(ports: T, gate: (label: string, call: { port: string; method: string; args: unknown[] }) => Promise<unknown>): T {
  const wrapped: Record<string, object> = {};
  for (const [name, port] of Object.entries(ports)) {
    wrapped[name] = new Proxy(port, {
      get(target, key, receiver) {
        const value: unknown = Reflect.get(target, key, receiver);
        if (typeof value !== 'function' || typeof key !== 'string') return value;
        return async (...args: unknown[]) => {
          await gate(`${name}.${key}(${args.map(describe).filter((arg) => arg !== '').join(', ')})`, { port: name, method: key, args });
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }
  return wrapped as T;
}

/** A port call's argument as a counterexample shows it: a path for a node, paths for a list, strings as they are. */
function describe(arg: unknown): string {
  if (typeof arg === 'string') return arg;
  if (Array.isArray(arg)) return `[${arg.map(describe).join(' ')}]`;
  if (arg && typeof arg === 'object' && 'path' in arg) return String(arg.path);
  return '';
}

/**
 * A large upload's multipart store in memory: one part of one byte, assembled into `ports.objects` as `L`
 * (`open`: the multipart uploads begun and not yet completed or aborted).
 */
export function memoryMultipart(ports: Pick<MemoryPorts, 'objects'>): MultipartStore & { open: Set<string> } {
  const open = new Set<string>();
  return {
    open,
    begin: async () => (open.add('mp'), 'mp'),
    partUrls: async (_key, _id, first, count) => Array.from({ length: count }, (_, i) => `https://s3.test/${first + i}`),
    listParts: async (_key, id) => (open.has(id) ? [{ number: 1, etag: '"p1"', size: 1 }] : undefined),
    complete: async (key, id) => {
      if (!open.delete(id)) return 'gone';
      await ports.objects.put(key, Buffer.from('L'), 'application/octet-stream');
      return 'done';
    },
    head: async (key) => {
      const held = ports.objects.objects.get(key);
      return held && { size: held.body.length, etag: 'e-1' };
    },
    abort: async (_key, id) => void open.delete(id),
  };
}

/** Large-upload sessions in memory whose claims hold for their lease, as the DynamoDB adapter's do. */
export function leasedSessions(): UploadSessionStore {
  const kept = new Map<string, { session: UploadSession; until: number }>();
  return {
    put: async (session) => void kept.set(session.id, { session, until: 0 }),
    get: async (_drive, id) => kept.get(id)?.session,
    claim: async (_drive, id, lease) => {
      const one = kept.get(id);
      if (!one) return undefined;
      if (one.until > Date.now()) return 'busy';
      one.until = Date.now() + lease;
      return one.session;
    },
    markRecording: async (id) => {
      const one = kept.get(id);
      if (one) one.session = { ...one.session, recording: true };
    },
    release: async (id, recordFree = false) => {
      const one = kept.get(id);
      if (!one) return;
      one.until = 0;
      if (recordFree) {
        const { recording: _, ...rest } = one.session;
        one.session = rest;
      }
    },
    remove: async (id) => void kept.delete(id),
  };
}

/** Large-upload sessions in memory; `failRemoves`: how many `remove` calls fail first (a throttled write). */
export function memorySessions(failRemoves = 0): UploadSessionStore & { held: Map<string, UploadSession> } {
  const held = new Map<string, UploadSession>();
  let failing = failRemoves;
  return {
    held,
    put: async (session) => void held.set(session.id, session),
    get: async (_drive, id) => held.get(id),
    claim: async (_drive, id) => held.get(id),
    markRecording: async (id) => {
      const session = held.get(id);
      if (session) held.set(id, { ...session, recording: true });
    },
    release: async (id, recordFree = false) => {
      const session = held.get(id);
      if (!session || !recordFree) return;
      const { recording: _, ...rest } = session;
      held.set(id, rest);
    },
    remove: async (id) => {
      if (failing-- > 0) throw new Error('throttled');
      held.delete(id);
    },
  };
}
