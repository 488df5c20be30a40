import { Readable } from 'node:stream';
import { type ByteSelection, openFile } from '../../../functions/core/download';
import { DriveError } from '../../../functions/core/errors';
import type { ByteRange, DriveNode, FileNode, NodeStore, ObjectStore } from '../../../functions/core/ports';

const fileNode = (id: string, size: number): FileNode => ({
  kind: 'file', id, path: '/a.bin', size, contentType: 'application/octet-stream', createdAt: '2026-01-01T00:00:00.000Z', objectKey: `d/${id}`, etag: `etag-${id}`,
});

/** A node store that answers `get` from a queue of records, one per call; the last one repeats. */
function nodesAnswering(...records: (DriveNode | undefined)[]): NodeStore & { gets: number } {
  const store = {
    gets: 0,
    get: async () => records[Math.min(store.gets++, records.length - 1)],
  };
  return store as unknown as NodeStore & { gets: number };
}

/** An object store holding `present` keys; it records each open and its range. */
function objectsHolding(...present: string[]): ObjectStore & { opened: { key: string; range?: ByteRange }[] } {
  const opened: { key: string; range?: ByteRange }[] = [];
  const store = {
    opened,
    open: async (key: string, range?: ByteRange) => {
      opened.push({ key, range });
      return present.includes(key) ? { body: Readable.from([Buffer.from(key)]), size: 1 } : undefined;
    },
  };
  return store as unknown as ObjectStore & { opened: { key: string; range?: ByteRange }[] };
}

describe('Function: openFile', () => {
  it('opens the range the plan picks from the record', async () => {
    const objects = objectsHolding('d/one');
    const plan = (file: FileNode) => ({ bytes: { start: 1, end: file.size - 1 } as ByteSelection });

    const { file, body } = await openFile({ nodes: nodesAnswering(fileNode('one', 10)), objects }, 'd', '/a.bin', plan);

    expect(file.id).toBe('one');
    expect(body).toBeDefined();
    expect(objects.opened).toEqual([{ key: 'd/one', range: { start: 1, end: 9 } }]);
  });

  it('opens the whole object for "all"', async () => {
    const objects = objectsHolding('d/one');

    await openFile({ nodes: nodesAnswering(fileNode('one', 10)), objects }, 'd', '/a.bin', () => ({ bytes: 'all' as const }));

    expect(objects.opened).toEqual([{ key: 'd/one', range: undefined }]);
  });

  it('never opens the object when the plan needs no bytes (HEAD, 304)', async () => {
    const objects = objectsHolding('d/one');

    const { body, plan } = await openFile({ nodes: nodesAnswering(fileNode('one', 10)), objects }, 'd', '/a.bin', () => ({ bytes: 'none' as const, status: 304 }));

    expect(body).toBeUndefined();
    expect(plan.status).toBe(304);
    expect(objects.opened).toEqual([]);
  });

  it('reads the record again when its bytes vanished (replaced mid-read), and plans again from the new record', async () => {
    const nodes = nodesAnswering(fileNode('old', 10), fileNode('new', 4));
    const objects = objectsHolding('d/new');
    const planned: string[] = [];
    const plan = (file: FileNode) => {
      planned.push(file.id);
      return { bytes: { start: 0, end: file.size - 1 } as ByteSelection };
    };

    const { file } = await openFile({ nodes, objects }, 'd', '/a.bin', plan);

    expect(file.id).toBe('new');
    expect(planned).toEqual(['old', 'new']);
    expect(objects.opened).toEqual([
      { key: 'd/old', range: { start: 0, end: 9 } },
      { key: 'd/new', range: { start: 0, end: 3 } },
    ]);
  });

  it('answers not_found after a second miss, and for a folder or nothing at the path', async () => {
    const deps = (node: DriveNode | undefined) => ({ nodes: nodesAnswering(node), objects: objectsHolding() });
    const folder: DriveNode = { kind: 'folder', id: 'f', path: '/a.bin', createdAt: '2026-01-01T00:00:00.000Z' };

    for (const node of [fileNode('gone', 3), folder, undefined]) {
      await expect(openFile(deps(node), 'd', '/a.bin', () => ({ bytes: 'all' as const }))).rejects.toMatchObject({ code: 'not_found' });
    }
  });

  it('passes on what the plan throws, without opening the object', async () => {
    const objects = objectsHolding('d/one');
    const refusal = new DriveError('range_not_satisfiable', 'no byte');

    await expect(openFile({ nodes: nodesAnswering(fileNode('one', 0)), objects }, 'd', '/a.bin', () => { throw refusal; })).rejects.toBe(refusal);
    expect(objects.opened).toEqual([]);
  });
});
