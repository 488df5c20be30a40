import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may not reach (docs/change-feed-design.md, "Request forgery"): a delivery goes out of the
 * stack's own functions, so an address inside a network they sit in, or the instance metadata service, or the
 * Lambda runtime API on 127.0.0.1, would be a request forged by whoever registered the URL.
 */
const IPV4_REFUSED: readonly [string, number][] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, with the metadata service at 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

const IPV6_REFUSED: readonly [string, number][] = [
  ['::', 96], // unspecified, loopback (::1) and the deprecated IPv4-compatible addresses
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo among them)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4, which embeds any IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

/** The refused ranges, the IPv4 ones also as IPv4-mapped (::ffff:0:0/96) and NAT64 (64:ff9b::/96) addresses. */
export const REFUSED_ADDRESSES: BlockList = (() => {
  const list = new BlockList();
  for (const [address, prefix] of IPV4_REFUSED) {
    list.addSubnet(address, prefix, 'ipv4');
    list.addSubnet(`::ffff:${address}`, 96 + prefix, 'ipv6');
    list.addSubnet(`64:ff9b::${address}`, 96 + prefix, 'ipv6');
  }
  for (const [address, prefix] of IPV6_REFUSED) list.addSubnet(address, prefix, 'ipv6');
  return list;
})();

/** Whether a delivery may connect to `address` (an IP address; a zone id such as `%eth0` is ignored). */
export function addressAllowed(address: string, options: { loopbackOnly?: boolean } = {}): boolean {
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return false;
  if (options.loopbackOnly) return isLoopback(bare);
  return !REFUSED_ADDRESSES.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

const LOOPBACK = (() => {
  const list = new BlockList();
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addAddress('::1', 'ipv6');
  list.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');
  return list;
})();

function isLoopback(address: string): boolean {
  return LOOPBACK.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
}

/** One address a name resolves to, as `dns.lookup` with `all: true` answers. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses (`dns.promises.lookup(host, { all: true })` in the functions; a stub in tests). */
export type Resolve = (host: string) => Promise<ResolvedAddress[]>;

/** The hosts the local host lets a webhook reach over plain HTTP (`webhookAllowLoopback`). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether `url`'s host is one the local host delivers to over plain HTTP. */
export function isLoopbackHost(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname);
}

/** A URL the webhook rules refuse, or an address the guard refuses: the message says which, safe to answer. */
export class RefusedAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedAddressError';
  }
}

/**
 * Why `raw` cannot be a webhook's URL (undefined if it can): `https` with a host and no credentials; with
 * `allowLoopback` (the local host only) also `http://127.0.0.1`, `http://localhost` and `http://[::1]`.
 */
export function webhookUrlProblem(raw: string, allowLoopback: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute URL, like https://example.com/hooks/drive';
  }
  if (raw.length > 2048) return 'url must be at most 2048 characters';
  const loopback = allowLoopback && isLoopbackHost(url);
  if (url.protocol !== 'https:' && !(loopback && url.protocol === 'http:')) {
    return allowLoopback ? 'url must be https, or http to 127.0.0.1 or localhost' : 'url must be https';
  }
  if (url.username !== '' || url.password !== '') return 'url must not hold a user name or password';
  if (url.hostname === '') return 'url must name a host';
  return undefined;
}

/**
 * The address a delivery to `url` connects to: the host resolved once (an IP literal as it is), every
 * address it resolves to checked, the first returned. The caller connects to this address and nowhere else,
 * so a name that answers a public address to the check and a private one to the connection (DNS rebinding)
 * reaches nothing. With `allowLoopback`, a loopback host must resolve to loopback addresses only.
 */
export async function checkedAddress(url: URL, resolve: Resolve, allowLoopback: boolean): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const loopbackOnly = allowLoopback && isLoopbackHost(url);
  const family = isIP(host);
  const addresses = family !== 0 ? [{ address: host, family }] : await resolve(host);
  if (addresses.length === 0) throw new RefusedAddressError(`${url.hostname} has no address`);
  const refused = addresses.find((entry) => !addressAllowed(entry.address, { loopbackOnly }));
  if (refused) throw new RefusedAddressError(`refused address: ${url.hostname} resolves to ${refused.address}, which is not a public address`);
  return addresses[0];
}
