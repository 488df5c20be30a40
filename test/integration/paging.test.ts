import { DriveClient, type ErrorJson, type ListingJson, json } from '../support/api-client';
import { type RunningHost, sharedHost, stopHost } from '../support/local-host';

// Paged listing (an extension of the spec): GET /drive/list?limit=&cursor= answers the spec's data and
// next_cursor; following the cursors returns each entry once, in path byte order.

const KEY = 'paging-key-f6UrpcrOhwuH2C8YgGgAiPrZeO';

let host: RunningHost;
let drive: DriveClient;

type Page = ListingJson & { next_cursor: string | null };

beforeAll(async () => {
  host = await sharedHost({ DRIVE_API_KEYS: `paging:${KEY}`, DRIVE_RATE_LIMITS: 'off' });
  drive = new DriveClient(host.url, KEY);
  const names = Array.from({ length: 25 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`);
  expect((await drive.upload(names.map((filename) => ({ data: filename, filename })), names.map(() => ({ folder: '/paged' })))).status).toBe(200);
  for (const sub of ['a', 'm', 'z', 'é', 'A b']) expect((await drive.createFolder({ path: `/paged/${sub}` })).status).toBe(200);
});

afterAll(() => stopHost(host));

/** Every page of /paged at `limit`, following next_cursor to its end; `between` runs after each page. */
async function allPages(limit: number, between: (page: number) => Promise<void> = async () => undefined): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null | undefined;
  do {
    const query: Record<string, string> = { folder: '/paged', limit: String(limit), ...(cursor ? { cursor } : {}) };
    const res = await json<{ data: Page }>(drive.list(query));
    expect(res.status).toBe(200);
    pages.push(res.body.data);
    cursor = res.body.data.next_cursor;
    await between(pages.length);
  } while (cursor);
  return pages;
}

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const pathsOf = (pages: Page[]) => pages.flatMap((page) => [...page.files, ...page.folders].map((entry) => entry.path));

describe('GET /drive/list with limit and cursor', () => {
  it('returns every entry once, in path byte order, a page of at most `limit` at a time, and null after the last', async () => {
    const pages = await allPages(7);
    const unpaged = await json<{ data: ListingJson }>(drive.list({ folder: '/paged' }));
    const expected = [...unpaged.body.data.files, ...unpaged.body.data.folders].map((entry) => entry.path).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

    expect(pathsOf(pages).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))).toEqual(expected);
    expect(new Set(pathsOf(pages)).size).toBe(30);
    for (const page of pages) expect(page.files.length + page.folders.length).toBeLessThanOrEqual(7);
    expect(pages.at(-1)!.next_cursor).toBeNull();
    const flat = pathsOf(pages.map((page) => ({ ...page, folders: [] })));
    expect(flat).toEqual([...flat].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
  });

  it('returns each entry that stays throughout exactly once while others are added and deleted', async () => {
    const pages = await allPages(4, async (page) => {
      await drive.upload([{ data: 'late', filename: `late-${page}.txt` }], [{ folder: '/paged' }]);
      if (page === 2) await drive.deleteFolder({ path: '/paged/z' });
    });
    const seen = pathsOf(pages);
    const stayed = Array.from({ length: 25 }, (_, i) => `/paged/f${String(i).padStart(2, '0')}.txt`).concat(['/paged/a', '/paged/m', '/paged/A b', '/paged/é']);
    for (const path of stayed) expect({ path, times: seen.filter((p) => p === path).length }).toEqual({ path, times: 1 });
    expect(new Set(seen).size).toBe(seen.length);
  });

  it.each([
    ['limit=0', { limit: '0' }],
    ['limit=1001', { limit: '1001' }],
    ['limit=abc', { limit: 'abc' }],
    ['a cursor not from this API', { limit: '5', cursor: 'bm90IGEgY3Vyc29y' }],
    // Before listings were read in path order, a folder's cursor held a bare name: now it must name a child's path.
    ['a cursor holding a bare name', { limit: '5', cursor: Buffer.from(JSON.stringify(['/paged', 'f03.txt', 0])).toString('base64url') }],
    ['a cursor naming a path deeper than a child', { limit: '5', cursor: Buffer.from(JSON.stringify(['/paged', '/paged/a/x.txt', 0])).toString('base64url') }],
  ])('refuses %s with 422, naming the parameter', async (_, query) => {
    const { status, body } = await json<ErrorJson>(drive.list({ folder: '/paged', ...query }));
    expect({ status, code: body.error.code }).toEqual({ status: 422, code: 'validation_error' });
  });

  it('pages a recursive listing in path byte order: every entry below the folder once, the pages in turn in order, each at most `limit`', async () => {
    const files = ['a/1.txt', 'a/b/2.txt', 'a/b/c/3.txt', 'a/b/c/4.txt', 'd/5.txt', 'e.txt', 'f/g/h/6.txt', 'a b/7.txt'];
    expect((await drive.upload(files.map((name) => ({ data: name, filename: 'x' })), files.map((name) => ({ path: `/tree/${name}` })))).status).toBe(200);
    expect((await drive.createFolder({ path: '/tree/empty/deeper' })).status).toBe(200);
    const whole = await json<{ data: ListingJson }>(drive.list({ folder: '/tree', recursive: 'true' }));
    const expected = [...whole.body.data.files, ...whole.body.data.folders].map((entry) => entry.path).sort();

    for (const limit of [1, 3, 1000]) {
      const pages: Page[] = [];
      let cursor: string | null = null;
      do {
        const res: { status: number; body: { data: Page } } = await json<{ data: Page }>(drive.list({ folder: '/tree', recursive: 'true', limit: String(limit), ...(cursor ? { cursor } : {}) }));
        expect(res.status).toBe(200);
        pages.push(res.body.data);
        cursor = res.body.data.next_cursor;
      } while (cursor);
      const seen = pathsOf(pages);
      expect({ limit, seen: [...seen].sort() }).toEqual({ limit, seen: expected });
      // `/tree/a b` sorts between `/tree/a` and `/tree/a/1.txt` (a space is below `/`): pages follow path bytes, not the walk.
      const inTurn = pages.flatMap((page) => [...page.files, ...page.folders].map((entry) => entry.path).sort(byBytes));
      expect({ limit, inTurn }).toEqual({ limit, inTurn: [...expected].sort(byBytes) });
      for (const page of pages) expect(page.files.length + page.folders.length).toBeLessThanOrEqual(limit);
    }
  });

  it('returns each entry below the folder that stays throughout exactly once, while others come and go', async () => {
    const whole = await json<{ data: ListingJson }>(drive.list({ folder: '/tree', recursive: 'true' }));
    const stayed = [...whole.body.data.files, ...whole.body.data.folders].map((entry) => entry.path).filter((path) => !path.startsWith('/tree/d'));
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page === 0 || cursor; page++) {
      const res: { body: { data: Page } } = await json<{ data: Page }>(drive.list({ folder: '/tree', recursive: 'true', limit: '2', ...(cursor ? { cursor } : {}) }));
      seen.push(...pathsOf([res.body.data]));
      cursor = res.body.data.next_cursor;
      await drive.upload([{ data: 'new', filename: `new-${page}.txt` }], [{ folder: page % 2 === 0 ? '/tree/a/b' : '/tree/zz' }]);
      if (page === 3) await drive.deleteFolder({ path: '/tree/d', recursive: 'true' });
    }
    for (const path of stayed) expect({ path, times: seen.filter((p) => p === path).length }).toEqual({ path, times: 1 });
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('refuses a cursor of a folder listing for a recursive one, and the other way round', async () => {
    const flat = await json<{ data: Page }>(drive.list({ folder: '/paged', limit: '2' }));
    const deep = await json<{ data: Page }>(drive.list({ folder: '/paged', limit: '2', recursive: 'true' }));
    expect((await drive.list({ folder: '/paged', limit: '2', recursive: 'true', cursor: flat.body.data.next_cursor! })).status).toBe(422);
    expect((await drive.list({ folder: '/paged', limit: '2', cursor: deep.body.data.next_cursor! })).status).toBe(422);
  });

  it("refuses a cursor of another folder's listing", async () => {
    const first = await json<{ data: Page }>(drive.list({ folder: '/paged', limit: '2' }));
    const { status, body } = await json<ErrorJson>(drive.list({ folder: '/', limit: '2', cursor: first.body.data.next_cursor! }));
    expect({ status, message: body.error.message }).toEqual({ status: 422, message: expect.stringContaining('another folder') });
  });

  it('keeps the spec answer, with no next_cursor, when neither limit nor cursor is given', async () => {
    const res = await json<{ data: Record<string, unknown> }>(drive.list({ folder: '/paged' }));
    expect(Object.keys(res.body.data).sort()).toEqual(['files', 'folder', 'folders']);
  });
});
