// @ts-check
/**
 * The signed-in key. It lives in this tab's session storage only: never in a URL, a cookie or local
 * storage, so it leaves with the tab, and no page of another origin can read it.
 */

const STORAGE_KEY = 'drive.apiKey';

/** The key this tab signed in with, or undefined. */
export function readKey() {
  return sessionStorage.getItem(STORAGE_KEY) ?? undefined;
}

/** @param {string} key an admin key that the API has just accepted */
export function storeKey(key) {
  sessionStorage.setItem(STORAGE_KEY, key);
}

export function forgetKey() {
  sessionStorage.removeItem(STORAGE_KEY);
}
