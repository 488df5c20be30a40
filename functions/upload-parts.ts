import { chargeMore, guard } from './wiring/guard';
import { largeUploads } from './wiring/large-uploads';
import { DEFAULT_PART_URLS_PAGE, PART_URLS_PER_TOKEN, partUrlsPage, sessionVisibleTo } from './core/large-upload';
import { jsonHandler } from './http/api-handler';
import { uploadIdOf } from './http/event';
import { queryInput } from './http/request-input';
import { partUrlsView } from './http/views';
import { PartUrlsQuery } from './openapi/request-schemas';

/**
 * GET /drive/uploads/{upload_id}/parts?from=&limit= → presigned URLs for parts `from` (default 1) on, at most
 * `limit` (1 to 1,000; default 50), and `next_part`: the pages after the start's, or fresh URLs for lost ones. A
 * page takes one token of the `upload` bucket per 50 URLs asked for.
 */
export const handler = jsonHandler({ permission: 'upload', guard, stores: { largeUploads } }, async (event, { caller, drive, stores }) => {
  const id = uploadIdOf(event);
  const query = queryInput(event, PartUrlsQuery);
  const from = query.from ?? 1;
  const limit = query.limit ?? DEFAULT_PART_URLS_PAGE;
  // Signing is the work: a page pays one token of the upload bucket per 50 URLs asked for (the guard took one).
  await chargeMore(caller, 'upload', Math.ceil(limit / PART_URLS_PER_TOKEN) - 1);
  const { session, parts } = await partUrlsPage(stores.largeUploads, drive, id, from, limit, sessionVisibleTo(caller));
  return { upload_id: session.id, part_size: session.partSize, part_count: session.partCount, ...partUrlsView(parts), expires_at: session.expiresAt };
});
