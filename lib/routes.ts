import type { Permission } from '../functions/core/access';
import { ROUTE_SPECS, type RouteHandler, type RouteSpec } from '../functions/http/routes';

/**
 * The Lambda functions, one per handler module: those behind the routes (a handler may serve more than one),
 * and those a queue or a schedule runs.
 */
export type HandlerName = RouteHandler | 'job-worker' | 'sweep' | 'consistency-check' | 'sequencer';

/**
 * One route and the handler module behind it; the CDK stack and the local host both read this. Each is taken
 * from the route's object in functions/http/routes.ts, which also describes it in the OpenAPI document.
 */
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

/** A route as the stack and the host serve it, from its route object (functions/http/routes.ts). */
function served(spec: RouteSpec): Route {
  return { method: spec.method, path: spec.path, handler: spec.handler, entry: `functions/${spec.handler}.ts`, streaming: spec.streaming, ...(spec.secretPath ? { secretPath: true } : {}) };
}

/** The routes of the API: each takes an API key and tokens from its rate-limit bucket. */
export const ROUTES: readonly ApiRoute[] = ROUTE_SPECS.flatMap((spec) => (spec.permission === undefined ? [] : [{ ...served(spec), permission: spec.permission }]));

/**
 * What a share link's URL opens: the file, to anyone holding the token, with no key (the token is checked in
 * the function). Under `/s/`, clear of the API's `/drive/…` and of the dashboard's one-segment `/{file}`.
 */
export const LINK_ROUTES: readonly Route[] = ROUTE_SPECS.filter((spec) => spec.handler === 'open-link').map(served);

/**
 * The token exchange (issue 25): keyless, as the token it takes is the credential; rate-limited per drive and
 * per source address in the function.
 */
export const TOKEN_ROUTES: readonly Route[] = ROUTE_SPECS.filter((spec) => spec.handler === 'exchange-token').map(served);

/**
 * The API's OpenAPI document (functions/openapi/document.ts), with no key: what a team generates its client
 * from. A path of its own, which API Gateway matches before the dashboard's `/{file}` (the local host lists it
 * first for the same effect).
 */
export const CONTRACT_ROUTES: readonly Route[] = ROUTE_SPECS.filter((spec) => spec.handler === 'openapi').map(served);

/**
 * The web dashboard's page and its assets (an extension: Settings → API Keys and a file browser). They take
 * no key, as they hold no data: the page signs in with a key of any role and sends it with each API call.
 */
export const DASHBOARD_ROUTES: readonly Route[] = ROUTE_SPECS.filter((spec) => spec.handler === 'dashboard').map(served);

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

/**
 * The change feed's sequencer (docs/change-feed-design.md): fed the nodes table's stream, by an event source
 * mapping in AWS and by the local host's tap of its embedded DynamoDB.
 */
export const SEQUENCER = { handler: 'sequencer', entry: 'functions/sequencer.ts' } as const;

/** Request types API Gateway passes to the function base64-encoded, bytes intact. */
export const BINARY_MEDIA_TYPES: readonly string[] = ['multipart/form-data', 'application/octet-stream'];
