/** The part of s3rver's filesystem store this middleware reads. */
export interface MetadataStore {
  getMetadata(bucket: string, key: string): Promise<Record<string, unknown>>;
}

/** The part of a Koa context this middleware reads and writes. */
interface KoaContext {
  method: string;
  path: string;
  querystring: string;
  headers: Record<string, string | string[] | undefined>;
  status: number;
  type: string;
  body: unknown;
}

/**
 * `If-Match` on GetObject and HeadObject, which s3rver ignores: S3 answers `412 PreconditionFailed` when no
 * listed ETag is the object's (`*` matches any object), before any byte or range. A client of a direct
 * download sends the ETag the API authorised, so a read of other bytes fails rather than passes.
 */
export function conditionalReads(store: MetadataStore) {
  return async (ctx: KoaContext, next: () => Promise<void>): Promise<void> => {
    const ifMatch = ctx.headers['if-match'];
    const match = /^\/([^/]+)\/(.+)$/.exec(ctx.path);
    // Object reads only: a query names a subresource (acl, tagging, an upload's parts) unless it holds only
    // the signature's X-Amz-*, response-* overrides and the SDK's x-id.
    const plainRead = [...new URLSearchParams(ctx.querystring).keys()].every((name) => name.startsWith('response-') || name.startsWith('X-Amz-') || name === 'x-id');
    if (typeof ifMatch !== 'string' || !match || (ctx.method !== 'GET' && ctx.method !== 'HEAD') || !plainRead) return next();
    const [, bucket, key] = match;
    const metadata = await store.getMetadata(bucket, decodeURIComponent(key)).catch(() => undefined);
    // No object: s3rver's own NoSuchKey, as S3 answers 404 before it weighs a precondition.
    if (!metadata) return next();
    const etag = String(metadata.etag ?? '').replace(/"/g, '');
    const tags = ifMatch.split(',').map((tag) => tag.trim().replace(/^"|"$/g, ''));
    if (tags.includes('*') || tags.includes(etag)) return next();
    ctx.status = 412;
    if (ctx.method === 'HEAD') return;
    ctx.type = 'application/xml';
    ctx.body =
      '<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message>' +
      '<Condition>If-Match</Condition></Error>';
  };
}
