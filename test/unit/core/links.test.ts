import { createHash } from 'node:crypto';
import { DEFAULT_LINK_SECONDS, MAX_LINK_SECONDS, type LinkStore, type ShareLink, findLink, linkLifetime, makerReaches } from '../../../functions/core/links';

const TOKEN = 'A'.repeat(43);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A store holding `links`, keyed by id, that counts its reads. */
function storeOf(...links: ShareLink[]): LinkStore & { reads: number } {
  const store = {
    reads: 0,
    put: async () => undefined,
    get: async (id: string) => {
      store.reads++;
      return links.find((link) => link.id === id);
    },
    page: async () => ({ links: [] }),
    remove: async () => false,
  };
  return store;
}

const link = (expiresAt: number): ShareLink => ({ id: sha256(TOKEN), drive: 'd', path: '/a.txt', fileId: 'f1', createdAt: '2026-01-01T00:00:00.000Z', expiresAt });

describe('Function: linkLifetime', () => {
  it('defaults to a day and takes whole seconds from 1 to 30 days', () => {
    expect(linkLifetime(undefined)).toBe(DEFAULT_LINK_SECONDS);
    expect(linkLifetime(1)).toBe(1);
    expect(linkLifetime(MAX_LINK_SECONDS)).toBe(30 * 86_400);
  });

  it.each([0, -1, MAX_LINK_SECONDS + 1, 1.5, '60', Number.NaN, true, {}])('refuses %p with validation_error', (value) => {
    expect(() => linkLifetime(value)).toThrow(expect.objectContaining({ code: 'validation_error', message: expect.stringContaining('expires_in') }));
  });
});

describe('Function: findLink', () => {
  it('finds a link by the SHA-256 of its token in one read, until the second it expires', async () => {
    // Prepare: a link expiring at t = 1,000,000 s.
    const store = storeOf(link(1_000_000));

    // Act and assess: the clock is the caller's, so expiry is tested to the second without waiting.
    await expect(findLink(store, TOKEN, new Date(999_999_999))).resolves.toMatchObject({ path: '/a.txt' });
    await expect(findLink(store, TOKEN, new Date(1_000_000_000))).rejects.toMatchObject({ code: 'not_found' });
    expect(store.reads).toBe(2);
  });

  it('answers a malformed token not_found without reading the store', async () => {
    const store = storeOf(link(2_000_000_000));
    for (const token of ['', 'short', `${TOKEN}A`, `${'A'.repeat(42)}.`]) await expect(findLink(store, token, new Date(0))).rejects.toMatchObject({ code: 'not_found' });
    expect(store.reads).toBe(0);
  });
});

describe('Function: makerReaches', () => {
  const shared: ShareLink = { ...link(2_000_000_000), path: '/team/plans.pdf' };
  const maker = { keyId: '0123456789abcdef', drive: 'd', role: 'read-only' as const, prefix: '/team' };

  it('keeps a link open while the key that made it may read its file', () => {
    expect(makerReaches(maker, shared)).toBe(true);
    expect(makerReaches({ ...maker, role: 'admin', prefix: '/' }, shared)).toBe(true);
  });

  it.each([
    ['revoked (or gone)', undefined],
    ['confined elsewhere now', { ...maker, prefix: '/other' }],
    ['confined to a sibling that merely starts alike', { ...maker, prefix: '/tea' }],
    ['upload-only now, which may not read', { ...maker, role: 'upload-only' as const }],
    ["another drive's", { ...maker, drive: 'e' }],
  ])('closes it once the key is %s', (_, now) => {
    expect(makerReaches(now, shared)).toBe(false);
  });
});
