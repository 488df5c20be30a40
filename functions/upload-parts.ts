import { chargeMore, guard } from './wiring/guard';
import { largeUploads } from './wiring/large-uploads';
import { invalid } from './core/errors';
import { DEFAULT_PART_URLS_PAGE, MAX_PART_URLS_PAGE, PART_URLS_PER_TOKEN, partUrlsPage, sessionVisibleTo } from './core/large-upload';
import { jsonHandler } from './http/api-handler';
import { queryParam, uploadIdOf } from './http/event';
import { partUrlsView } from './http/views';

/**
 * GET /drive/uploads/{upload_id}/parts?from=&limit= → presigned URLs for parts `from` (default 1) on, at most
 * `limit` (1 to 1,000; default 50), and `next_part`: the pages after the start's, or fresh URLs for lost ones. A
 * page takes one token of the `upload` bucket per 50 URLs asked for.
 */
export const handler = jsonHandler({ permission: 'upload', guard, stores: { largeUploads } }, async (event, { caller, drive, stores }) => {
  const id = uploadIdOf(event);
  const from = wholeNumber(queryParam(event, 'from'), 'from', 1, Number.MAX_SAFE_INTEGER) ?? 1;
  const limit = wholeNumber(queryParam(event, 'limit'), 'limit', 1, MAX_PART_URLS_PAGE) ?? DEFAULT_PART_URLS_PAGE;
  // Signing is the work: a page pays one token of the upload bucket per 50 URLs asked for (the guard took one).
  await chargeMore(caller, 'upload', Math.ceil(limit / PART_URLS_PER_TOKEN) - 1);
  const { session, parts } = await partUrlsPage(stores.largeUploads, drive, id, from, limit, sessionVisibleTo(caller));
  return { upload_id: session.id, part_size: session.partSize, part_count: session.partCount, ...partUrlsView(parts), expires_at: session.expiresAt };
});

function wholeNumber(value: string | undefined, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^[0-9]{1,16}$/.test(value) || number < min || number > max) throw invalid(`${name} must be a whole number from ${min} to ${max.toLocaleString('en')} (got ${JSON.stringify(value.slice(0, 20))})`);
  return number;
}
