import type { Permission } from '../functions/core/access';

/** The Lambda functions, one per handler module; a handler may serve more than one route. */
export type HandlerName =
  | 'upload'
  | 'download'
  | 'list'
  | 'create-folder'
  | 'delete-folder'
  | 'delete-files'
  | 'move'
  | 'copy'
  | 'get-job'
  | 'whoami'
  | 'job-worker'
  | 'start-upload'
  | 'upload-parts'
  | 'complete-upload'
  | 'abort-upload'
  | 'list-keys'
  | 'create-key'
  | 'revoke-key'
  | 'create-link'
  | 'list-links'
  | 'revoke-link'
  | 'open-link'
  | 'dashboard'
  | 'openapi'
  | 'sweep'
  | 'consistency-check';

/** One route and the handler module behind it; the CDK stack and the local host both read this. */
export interface Route {
  method: 'GET' | 'HEAD' | 'POST' | 'DELETE';
  path: string;
  /** The function that serves the route. */
  handler: HandlerName;
  /** The handler module, relative to the project root; it exports `handler`. */
  entry: string;
  /** Streamed through `awslambda.streamifyResponse` rather than returned whole. */
  streaming: boolean;
  /** The path holds a secret (a share link's token): logs name the route, never the path called. */
  secretPath?: boolean;
}

/** A route of the API: it takes an API key and tokens from a rate-limit bucket. */
export interface ApiRoute extends Route {
  /** What the key must be allowed, and so the rate-limit bucket the route's requests take tokens from. */
  permission: Permission;
}

export const ROUTES: readonly ApiRoute[] = [
  { method: 'POST', path: '/drive/upload', handler: 'upload', permission: 'upload', entry: 'functions/upload.ts', streaming: false },
  { method: 'GET', path: '/drive/download', handler: 'download', permission: 'download', entry: 'functions/download.ts', streaming: true },
  // The same function answers HEAD from the record alone; streamed like GET, so the response has one shape.
  { method: 'HEAD', path: '/drive/download', handler: 'download', permission: 'download', entry: 'functions/download.ts', streaming: true },
  // Streamed, so that a listing of any size answers whole: a buffered answer stops at Lambda's 6 MB.
  { method: 'GET', path: '/drive/list', handler: 'list', permission: 'list', entry: 'functions/list.ts', streaming: true },
  { method: 'POST', path: '/drive/folders', handler: 'create-folder', permission: 'create-folder', entry: 'functions/create-folder.ts', streaming: false },
  { method: 'DELETE', path: '/drive/folders', handler: 'delete-folder', permission: 'delete-folder', entry: 'functions/delete-folder.ts', streaming: false },
  // Deleting files by path (an extension: the spec deletes only folders).
  { method: 'DELETE', path: '/drive/files', handler: 'delete-files', permission: 'files', entry: 'functions/delete-files.ts', streaming: false },
  // Moving a file or folder (an extension): a folder too big for one request answers 202 with a job.
  { method: 'POST', path: '/drive/move', handler: 'move', permission: 'files', entry: 'functions/move.ts', streaming: false },
  // Copying a file (an extension): the bytes copied in S3, server-side.
  { method: 'POST', path: '/drive/copy', handler: 'copy', permission: 'files', entry: 'functions/copy.ts', streaming: false },
  // A delete or move too big for one request answers 202 with a job (an extension); its client reads the job here.
  { method: 'GET', path: '/drive/jobs/{job_id}', handler: 'get-job', permission: 'jobs', entry: 'functions/get-job.ts', streaming: false },
  // What the caller's key may do (an extension): the dashboard asks at sign-in, to offer only what the role allows.
  { method: 'GET', path: '/drive/whoami', handler: 'whoami', permission: 'whoami', entry: 'functions/whoami.ts', streaming: false },
  // Large files (an extension of the spec): a multipart upload straight to S3. Each takes upload tokens.
  { method: 'POST', path: '/drive/uploads', handler: 'start-upload', permission: 'upload', entry: 'functions/start-upload.ts', streaming: false },
  { method: 'GET', path: '/drive/uploads/{upload_id}/parts', handler: 'upload-parts', permission: 'upload', entry: 'functions/upload-parts.ts', streaming: false },
  { method: 'POST', path: '/drive/uploads/{upload_id}/complete', handler: 'complete-upload', permission: 'upload', entry: 'functions/complete-upload.ts', streaming: false },
  { method: 'DELETE', path: '/drive/uploads/{upload_id}', handler: 'abort-upload', permission: 'upload', entry: 'functions/abort-upload.ts', streaming: false },
  // API keys, for admin keys (an extension of the spec: the dashboard's Settings → API Keys).
  { method: 'GET', path: '/drive/keys', handler: 'list-keys', permission: 'keys', entry: 'functions/list-keys.ts', streaming: false },
  { method: 'POST', path: '/drive/keys', handler: 'create-key', permission: 'keys', entry: 'functions/create-key.ts', streaming: false },
  { method: 'DELETE', path: '/drive/keys/{key_id}', handler: 'revoke-key', permission: 'keys', entry: 'functions/revoke-key.ts', streaming: false },
  // Share links (an extension of the spec): made, listed and revoked with a key; opened without one (LINK_ROUTES).
  { method: 'POST', path: '/drive/links', handler: 'create-link', permission: 'links', entry: 'functions/create-link.ts', streaming: false },
  { method: 'GET', path: '/drive/links', handler: 'list-links', permission: 'links', entry: 'functions/list-links.ts', streaming: false },
  { method: 'DELETE', path: '/drive/links/{link_id}', handler: 'revoke-link', permission: 'links', entry: 'functions/revoke-link.ts', streaming: false },
  // Every link one key made, a page a request (a leaked key's): the same function as one link's revoke.
  { method: 'DELETE', path: '/drive/links', handler: 'revoke-link', permission: 'links', entry: 'functions/revoke-link.ts', streaming: false },
];

/**
 * What a share link's URL opens: the file, to anyone holding the token, with no key (the token is checked in
 * the function). Under `/s/`, clear of the API's `/drive/…` and of the dashboard's one-segment `/{file}`;
 * streamed, as downloads are, with HEAD from the same function.
 */
export const LINK_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/s/{token}', handler: 'open-link', entry: 'functions/open-link.ts', streaming: true, secretPath: true },
  { method: 'HEAD', path: '/s/{token}', handler: 'open-link', entry: 'functions/open-link.ts', streaming: true, secretPath: true },
];

/**
 * The API's OpenAPI document (functions/openapi/document.ts), with no key: what a team generates its client
 * from. A path of its own, which API Gateway matches before the dashboard's `/{file}` (the local host lists it
 * first for the same effect).
 */
export const CONTRACT_ROUTES: readonly Route[] = [{ method: 'GET', path: '/openapi.json', handler: 'openapi', entry: 'functions/openapi.ts', streaming: false }];

/**
 * The web dashboard's page and its assets (an extension: Settings → API Keys and a file browser). They take
 * no key, as they hold no data: the page signs in with a key of any role and sends it with each API call.
 */
export const DASHBOARD_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/', handler: 'dashboard', entry: 'functions/dashboard.ts', streaming: false },
  { method: 'GET', path: '/{file}', handler: 'dashboard', entry: 'functions/dashboard.ts', streaming: false },
];

/** The path parameters of `pathname` if it matches the route path `template` (`{name}` takes one segment). */
export function matchPath(template: string, pathname: string): Record<string, string> | undefined {
  const want = template.split('/');
  const got = pathname.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const name = /^\{(\w+)\}$/.exec(want[i])?.[1];
    if (name === undefined) {
      if (want[i] !== got[i]) return undefined;
    } else {
      if (got[i] === '') return undefined;
      try {
        params[name] = decodeURIComponent(got[i]);
      } catch {
        return undefined;
      }
    }
  }
  return params;
}

/** A function run on a schedule rather than behind a route: an EventBridge rule in AWS, a timer on the local host. */
export interface ScheduledFunction {
  handler: HandlerName;
  entry: string;
  everyMinutes: number;
  /** The host runs it on a timer of its own, every this setting's seconds, rather than on the sweep's timer. */
  localTimer?: 'localFsckSeconds';
}

export const SCHEDULED: readonly ScheduledFunction[] = [
  // Deletes the bytes interrupted uploads left (functions/core/journal.ts).
  { handler: 'sweep', entry: 'functions/sweep.ts', everyMinutes: 5 },
  // A slice of fsck a run (functions/core/consistency-check.ts); the stack's rate comes from cdk context.
  { handler: 'consistency-check', entry: 'functions/consistency-check.ts', everyMinutes: 24 * 60, localTimer: 'localFsckSeconds' },
];

/**
 * A function fed by a queue: SQS with an event source mapping in AWS (one message at a time, and a
 * dead-letter queue after `maxReceives` failures), the host's embedded queue locally.
 */
export interface QueueWorker {
  handler: HandlerName;
  entry: string;
  /** The queue's name in the stack and on the host. */
  queue: string;
  /** Deliveries of one message before it goes to the dead-letter queue. */
  maxReceives: number;
}

export const QUEUE_WORKERS: readonly QueueWorker[] = [
  // Finishes recursive deletes too big for one request (functions/core/delete-folder.ts).
  { handler: 'job-worker', entry: 'functions/job-worker.ts', queue: 'jobs', maxReceives: 5 },
];

/** Request types API Gateway passes to the function base64-encoded, bytes intact. */
export const BINARY_MEDIA_TYPES: readonly string[] = ['multipart/form-data', 'application/octet-stream'];
