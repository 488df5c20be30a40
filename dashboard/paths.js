// @ts-check
/**
 * Drive paths as the dashboard builds them: canonical, absolute, `/` between segments, no trailing slash
 * (the root is `/`). Pure functions, unit-tested in test/unit/dashboard/paths.test.ts.
 */

/**
 * The last segment of `path` (empty for the root).
 * @param {string} path
 */
export function nameOf(path) {
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * The folder holding `path` (the root holds itself).
 * @param {string} path
 */
export function parentOf(path) {
  const cut = path.lastIndexOf('/');
  return cut <= 0 ? '/' : path.slice(0, cut);
}

/**
 * `name` inside `folder`.
 * @param {string} folder
 * @param {string} name
 */
export function childPath(folder, name) {
  return folder === '/' ? `/${name}` : `${folder}/${name}`;
}

/**
 * Whether `path` is `folder` itself or lies below it: a folder cannot be moved or copied there.
 * @param {string} path
 * @param {string} folder
 */
export function isWithin(path, folder) {
  return folder === '/' || path === folder || path.startsWith(`${folder}/`);
}

/**
 * Why `name` cannot name a file or folder, in the API's words, or undefined if it can (the API checks the
 * rest, such as its length in bytes, and its message is shown as is).
 * @param {string} name
 */
export function nameProblem(name) {
  if (name === '') return 'Give it a name.';
  if (name.includes('/')) return 'A name cannot contain “/”: use Move to put it in another folder.';
  if (name === '.' || name === '..') return 'A name cannot be “.” or “..”.';
  // Control characters: the API refuses them in names.
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'A name cannot contain control characters.';
  // The API refuses these too: "report.pdf " would look like "report.pdf" in a listing.
  if (name.startsWith(' ') || name.endsWith(' ')) return 'A name cannot start or end with a space.';
  return undefined;
}

/**
 * Where a Move or Copy of `path` into `folder` under `name` lands, or why it cannot (a folder into itself).
 * @param {{ path: string, kind: 'file' | 'folder' }} entry
 * @param {string} folder
 * @param {string} name
 * @returns {{ to: string } | { problem: string }}
 */
export function destinationOf(entry, folder, name) {
  const problem = nameProblem(name);
  if (problem) return { problem };
  const to = childPath(folder, name.normalize('NFC'));
  if (entry.kind === 'folder' && isWithin(folder, entry.path)) return { problem: `A folder cannot go inside itself: pick a folder outside ${entry.path}.` };
  if (to === entry.path) return { problem: 'That is where it already is: pick another folder or name.' };
  return { to };
}

/**
 * The name to preselect when renaming: the part before the extension, so typing replaces the name and keeps
 * `.pdf` (a leading dot, as in `.env`, is not an extension).
 * @param {string} name
 * @returns {[number, number]}
 */
export function stemRange(name) {
  const dot = name.lastIndexOf('.');
  return [0, dot > 0 ? dot : name.length];
}
