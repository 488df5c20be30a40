import { keys, rateLimiter, rateLimits } from './wiring/guard';
import { links } from './wiring/links';
import { nodes } from './wiring/nodes';
import { objects } from './wiring/objects';
import { openFile } from './core/download';
import { DriveError } from './core/errors';
import { findLink, linkGone, makerReaches, stillShared } from './core/links';
import { keylessStreamingHandler } from './http/api-handler';
import { planDownload, representationOf } from './http/conditional';
import { bytesToRead, downloadHeaders, downloadRequestOf } from './http/download-response';
import { takeToken } from './http/guard';
import { type Problem, queryInput } from './http/request-input';
import { OpenLinkQuery } from './openapi/request-schemas';

/**
 * Types a browser shows without running anything in them. HTML, SVG and XML are not among them: the
 * dashboard, which keeps API keys in the browser, is served from this origin.
 */
// Audio and video of any codec, but never a markup type dressed as one (`video/xhtml+xml`): no `+` suffix.
const SHOWN_INLINE = /^(image\/(png|jpeg|gif|webp|avif|bmp)|application\/pdf|text\/plain|audio\/[a-z0-9.-]+|video\/[a-z0-9.-]+)$/;

/** `download=0` asks to show the file in the tab; `1` (the default) to save it. */
const DOWNLOAD = ({ value }: Problem) =>
  `download must be "0" (show in the browser, for types that are safe to) or "1" (save; the default) (got ${JSON.stringify((value as string).slice(0, 20))})`;

/**
 * GET /s/{token} (and HEAD), with no API key: the linked file, as GET /drive/download answers it (Range,
 * If-None-Match, the same validators and caching), from a rate-limit bucket of its own per link. `404` once
 * the link is revoked or expired, its file is deleted, replaced, or below a folder being deleted, or the key
 * that made it is revoked or no longer reaches the file. The
 * file comes as an attachment; `?download=0` shows it in the tab instead, if its type is one a browser
 * shows without running it.
 */
export const handler = awslambda.streamifyResponse(
  keylessStreamingHandler({ stores: { keys, links, nodes, objects } }, async (event, answered, _seen, { stores }) => {
    const link = await findLink(stores.links, event.pathParameters?.token ?? '', new Date());
    // Keyed by the link's id (the token's hash), never by anything of the key that made it.
    if (rateLimits) Object.assign(answered, await takeToken(rateLimiter, `link#${link.id}`, rateLimits.download, 'this link'));
    // The key that made it, read by its item's key (one GetItem, consistent): a revoked key's links, or one
    // that no longer reaches the file, open nothing. A link from before links kept it opens until it ends.
    if (link.makerKey !== undefined && !makerReaches(await stores.keys.find(link.makerKey), link)) throw linkGone();
    const shown = queryInput(event, OpenLinkQuery, { download: { value: DOWNLOAD } }).download === '0';
    // The URL is the secret: a file shown in the tab must not pass it on as a Referer, nor a search engine keep it.
    Object.assign(answered, { 'Referrer-Policy': 'no-referrer', 'X-Robots-Tag': 'noindex' });
    const request = downloadRequestOf(event);
    try {
      const { file, plan, body } = await openFile(stores, link.drive, link.path, (found) => {
        if (!stillShared(link, found)) throw linkGone();
        const chosen = planDownload(request, representationOf(found));
        return { ...chosen, bytes: bytesToRead(request.method, chosen) };
      });
      const inline = shown && SHOWN_INLINE.test(file.contentType.split(';')[0].trim().toLowerCase());
      return { statusCode: plan.status, headers: downloadHeaders(file, plan, { inline }), body };
    } catch (error) {
      // "no file at <path>" would tell the holder of the URL where the file was.
      if (error instanceof DriveError && error.code === 'not_found') throw linkGone();
      throw error;
    }
  }),
);
