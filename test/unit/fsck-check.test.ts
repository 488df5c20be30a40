import { check, isClean } from '../../functions/core/consistency';
import type { DriveNode } from '../../functions/core/ports';

const at = '2026-01-01T00:00:00.000Z';
const folder = (path: string): DriveNode => ({ kind: 'folder', id: path, path, createdAt: at });
const file = (path: string, objectKey: string): DriveNode => ({ kind: 'file', id: path, path, size: 1, contentType: 'text/plain', createdAt: at, objectKey, etag: objectKey });
const object = (key: string) => ({ key, lastModified: new Date(at), size: 1 });

describe('Function: check (fsck)', () => {
  it('finds a consistent drive clean', () => {
    const nodes = [folder('/a'), file('/a/x', 'd/1'), file('/y', 'd/2')].map((node) => ({ drive: 'd', node }));
    expect(isClean(check(nodes, [object('d/1'), object('d/2')]))).toBe(true);
  });

  it('reports each kind of problem', () => {
    const nodes = [
      { drive: 'd', node: file('/gone', 'd/missing') },
      { drive: 'd', node: file('/lost/child', 'd/3') },
      { drive: 'd', node: file('/plain', 'd/4') },
      { drive: 'd', node: file('/plain/under', 'd/5') },
      { drive: 'e', node: folder('/a') },
      { drive: 'd', node: file('/a/x', 'd/6') }, // /a exists in drive e only
    ];
    const findings = check(nodes, ['d/3', 'd/4', 'd/5', 'd/6', 'd/orphan'].map(object));

    expect(findings.recordsWithoutObject.map((n) => n.node.path)).toEqual(['/gone']);
    expect(findings.orphanedObjects.map((o) => o.key)).toEqual(['d/orphan']);
    expect(findings.missingParents).toEqual([
      { drive: 'd', path: '/lost', children: ['/lost/child'] },
      { drive: 'd', path: '/a', children: ['/a/x'] },
    ]);
    expect(findings.belowFiles.map((n) => n.node.path)).toEqual(['/plain/under']);
    expect(isClean(findings)).toBe(false);
  });

  it('reports a record whose object has another size, or another ETag where the listing gives one', () => {
    const nodes = [file('/short', 'd/1'), file('/other', 'd/2'), file('/fine', 'd/3'), { ...file('/old', 'd/4'), etag: '/old' }].map((node) => ({ drive: 'd', node }));
    const objects = [{ ...object('d/1'), size: 0 }, { ...object('d/2'), etag: 'abc' }, { ...object('d/3'), etag: 'd/3' }, { ...object('d/4'), etag: 'any' }];

    expect(check(nodes, objects).recordsNotMatchingObject.map(({ node }) => node.path)).toEqual(['/short', '/other']);
  });

  it('counts below a folder a delete took records without bytes as its progress, and reports the delete', () => {
    const marked: DriveNode = { ...(folder('/t') as DriveNode & { kind: 'folder' }), deleting: 'recursive' };
    const nodes = [marked, folder('/t/sub'), file('/t/sub/x', 'd/gone')].map((node) => ({ drive: 'd', node }));

    const findings = check(nodes, []);

    expect(findings.recordsWithoutObject).toEqual([]);
    expect(findings.interruptedDeletes.map(({ node }) => node.path)).toEqual(['/t']);
    expect(isClean(findings)).toBe(false);
  });

  it('does not count as orphaned an object that an open large-upload session names', () => {
    const findings = check([], [object('d/assembled'), object('d/orphan')], ['d/assembled', 'd/not-yet']);
    expect(findings.orphanedObjects.map((o) => o.key)).toEqual(['d/orphan']);
  });
});
