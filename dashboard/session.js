// @ts-check
/**
 * The signed-in key and what its role lets the page offer. They live in this tab's session storage only:
 * never in a URL, a cookie or local storage, so they leave with the tab, and no page of another origin can
 * read them. The role only shapes the page (which buttons it shows); the API enforces it on every call.
 */

/** @typedef {import('./api.js').Access} Access */
/** @typedef {import('./api.js').Role} Role */

const STORAGE_KEY = 'drive.apiKey';
const ACCESS_KEY = 'drive.access';
/** What the page keeps in a storage is named so; signing out removes all of it. */
const OURS = 'drive.';

/** Aborted when the key is forgotten: what the session started (calls, jobs followed, uploads) ends with it. */
let lifetime = new AbortController();

/**
 * The signal of the session signed in now: work that outlives a call (a job followed, an upload) takes it at
 * its start, so that it stops when that key is forgotten and never goes on under the next key.
 */
export function sessionSignal() {
  return lifetime.signal;
}

/** The key this tab signed in with, or undefined. */
export function readKey() {
  return sessionStorage.getItem(STORAGE_KEY) ?? undefined;
}

/**
 * @param {string} key a key that the API has just accepted
 * @param {Access} access what the API says it may do
 */
export function storeKey(key, access) {
  sessionStorage.setItem(STORAGE_KEY, key);
  storeAccess(access);
}

/** @param {Access} access */
export function storeAccess(access) {
  sessionStorage.setItem(ACCESS_KEY, JSON.stringify(access));
}

/**
 * What the signed-in key may do, as stored at sign-in, or undefined (a tab signed in before roles were read).
 * @returns {Access | undefined}
 */
export function readAccess() {
  try {
    const access = JSON.parse(sessionStorage.getItem(ACCESS_KEY) ?? 'null');
    return access && typeof access.role === 'string' ? access : undefined;
  } catch {
    return undefined;
  }
}

/** Forgets the key and all the page kept with it, and ends the session's work. */
export function forgetKey() {
  lifetime.abort(new DOMException('Signed out', 'AbortError'));
  lifetime = new AbortController();
  // Local storage too: this page never writes there, but no key or name may outlive the sign-out.
  for (const storage of [sessionStorage, localStorage]) {
    for (let i = storage.length - 1; i >= 0; i--) {
      const name = storage.key(i);
      if (name?.startsWith(OURS)) storage.removeItem(name);
    }
  }
}

/**
 * What each role lets the page offer, as the API's `ROLE_PERMISSIONS` allow it (README, "Keys, roles and the
 * admin routes"). Share links are offered to writers: the API decides, and a 403 is shown as it says.
 * @type {Readonly<Record<Role, Readonly<{ list: boolean, download: boolean, upload: boolean, createFolder: boolean, modify: boolean, share: boolean, manageKeys: boolean }>>>}
 */
const ABILITIES = {
  admin: { list: true, download: true, upload: true, createFolder: true, modify: true, share: true, manageKeys: true },
  'read-write': { list: true, download: true, upload: true, createFolder: true, modify: true, share: true, manageKeys: false },
  'read-only': { list: true, download: true, upload: false, createFolder: false, modify: false, share: false, manageKeys: false },
  'upload-only': { list: false, download: false, upload: true, createFolder: true, modify: false, share: false, manageKeys: false },
};

/**
 * What the signed-in key's role lets the page offer (`modify`: delete, rename, move and copy).
 * @param {Role} [role] the signed-in key's role by default
 */
export function abilities(role = readAccess()?.role ?? 'read-only') {
  return ABILITIES[role];
}
