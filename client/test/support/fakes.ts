import type { Clock } from '../../src/rate-limit-pacer';

/** A clock whose sleeps pass at once, moving its time forward; a sleep of "forever" waits for its signal. */
export class FakeClock implements Clock {
  time = 1_000_000;
  readonly sleeps: number[] = [];

  now = (): number => this.time;

  sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      this.sleeps.push(ms);
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      if (ms >= 2 ** 31 - 1) return;
      setImmediate(() => {
        this.time += ms;
        resolve();
      });
    });
}

/** A request as the fake fetch saw it. */
export interface SeenRequest {
  url: URL;
  method: string;
  headers: Headers;
  body: Blob | undefined;
}

/** A `fetch` that answers with `answer` and keeps every request it was given. */
export function fakeFetch(answer: (request: SeenRequest, index: number) => Response | Promise<Response>): typeof fetch & { requests: SeenRequest[] } {
  const requests: SeenRequest[] = [];
  const fetcher = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    init?.signal?.throwIfAborted();
    const body = init?.body === undefined || init.body === null ? undefined : init.body instanceof Blob ? init.body : new Blob([init.body as string]);
    const request: SeenRequest = { url: new URL(String(input)), method: init?.method ?? 'GET', headers: new Headers(init?.headers), body };
    requests.push(request);
    return answer(request, requests.length - 1);
  };
  return Object.assign(fetcher as typeof fetch, { requests });
}

/** A JSON answer of the API, with rate-limit headers if given. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

/** The error `fetch` throws when no answer comes, with a Node error code as its cause. */
export function networkFailure(code = 'ECONNRESET'): TypeError {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(`socket ${code}`), { code }) });
}

/**
 * Whether the download route answers `url` with the `307` of a presigned URL for a file of `size` bytes, as
 * docs/api.md has it: `redirect=true`, or `redirect_above` below the file's size.
 */
export function redirects(url: URL, size: number): boolean {
  const above = url.searchParams.get('redirect_above');
  return url.searchParams.get('redirect') === 'true' || (above !== null && size > Number(above));
}
