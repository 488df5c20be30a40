import { conflictFor } from '../../../functions/core/access';
import { DriveError, conflict, notFound } from '../../../functions/core/errors';

describe('Function: conflictFor (what a key may be told of a conflict)', () => {
  const scoped = { role: 'read-write' as const, prefix: '/reports' };

  it('keeps a conflict that names only paths inside the key’s folder', () => {
    const error = conflict('/reports/q3.txt is a file, so nothing can be stored below it', ['/reports/q3.txt']);
    expect(conflictFor(scoped, error)).toBe(error);
  });

  it('says nothing of a path above or beside the key’s folder', () => {
    const told = conflictFor(scoped, conflict('/archive is a file, so nothing can be stored below it', ['/archive'])) as Error;
    expect(told.message).not.toContain('/archive');
    expect(told.message).toContain('may not see');
  });

  it('tells an upload-only key only that its request could not be stored', () => {
    const told = conflictFor({ role: 'upload-only', prefix: '/' }, conflict('/inbox/payroll.csv is taken; this key may not replace what is there', ['/inbox/payroll.csv'])) as Error;
    expect(told.message).not.toMatch(/inbox|payroll/);
  });

  it('decides from the paths the error carries, not from its wording: a name with a space, and a message that names none', () => {
    // Read out of the words, "/q3 drafts/a.txt" would be "/q3", which lies outside the key's folder.
    const spaced = conflict('/q3 drafts/a.txt is a file, so nothing can be stored below it', ['/q3 drafts/a.txt']);
    expect(conflictFor({ role: 'read-write', prefix: '/q3 drafts' }, spaced)).toBe(spaced);
    const wordsOnly = conflict('the folders of this upload were deleted while it ran; try again', []);
    expect(conflictFor(scoped, wordsOnly)).toBe(wordsOnly);
    const outside = conflict('a path was taken meanwhile', ['/archive/2024']);
    expect((conflictFor(scoped, outside) as Error).message).toContain('may not see');
  });

  it('keeps a conflict with a reason, which names no destination, for every key: a busy upload session is waited on by its reason', () => {
    const busy = new DriveError('conflict', 'upload session u-1 is being completed or aborted by another request', {}, 'upload_busy');
    expect(conflictFor({ role: 'upload-only', prefix: '/' }, busy)).toBe(busy);
    expect(conflictFor(scoped, busy)).toBe(busy);
  });

  it('leaves other errors as they are', () => {
    const missing = notFound('folder /archive does not exist');
    expect(conflictFor(scoped, missing)).toBe(missing);
  });
});
