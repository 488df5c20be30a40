import { promises as dns } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { type Resolve, RefusedAddressError, type ResolvedAddress, checkedAddress } from '../core/address-guard';
import type { PostDelivery, PostOutcome } from '../core/webhooks';

/** Every address a name resolves to, as the guard must see them all. */
export const resolveAll: Resolve = (host) => dns.lookup(host, { all: true, verbatim: true });

/**
 * The `lookup` a request is given: it answers the address the guard checked and never asks DNS again, so
 * the connection goes where the check looked (with `all`, as Node's happy-eyeballs connect asks, that one
 * address alone).
 */
export function pinnedLookup(checked: ResolvedAddress): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: checked.address, family: checked.family }]);
    else callback(null, checked.address, checked.family);
  }) as unknown as LookupFunction;
}

/**
 * Delivers to a receiver as the worker must (docs/change-feed-design.md, "Delivering" and "Request forgery"):
 * the host resolved once and checked, the connection made to that address (the TLS name stays the URL's),
 * no proxy, no redirect followed (a 3xx is a failure like any other non-2xx), the whole exchange within the
 * timeout. The answer's body is read and dropped.
 */
export function webhookPoster(options: { resolve?: Resolve; allowLoopback: boolean }): PostDelivery {
  const resolve = options.resolve ?? resolveAll;
  return async (raw, body, headers, timeoutMs): Promise<PostOutcome> => {
    const url = new URL(raw);
    let checked: ResolvedAddress;
    try {
      checked = await checkedAddress(url, resolve, options.allowLoopback);
    } catch (error) {
      return { error: error instanceof RefusedAddressError ? error.message : `${url.hostname} could not be resolved` };
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<PostOutcome>((resolveOutcome) => {
      let settled = false;
      const settle = (outcome: PostOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolveOutcome(outcome);
      };
      const req = send(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
          lookup: pinnedLookup(checked),
          // A fresh connection per delivery: a pooled one could have been made to an address checked for another.
          agent: false,
        },
        (res) => {
          res.on('data', () => undefined);
          res.on('end', () => settle({ status: res.statusCode ?? 0 }));
          res.on('error', () => settle({ status: res.statusCode ?? 0 }));
        },
      );
      const timer = setTimeout(() => {
        settle({ error: `no answer within ${timeoutMs / 1000} s` });
        req.destroy();
      }, timeoutMs);
      req.on('error', (error: NodeJS.ErrnoException) => settle({ error: `the request failed: ${error.code ?? error.message}` }));
      req.end(body);
    });
  };
}
