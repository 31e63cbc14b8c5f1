/**
 * The StatsD socket's address lookup: a host name resolved at most once per `ttlMs`, not for
 * every datagram. Node's dgram resolves the address of each `send`; uncached, a datagram cost a
 * getaddrinfo on libuv's threadpool and, for a cluster name (`dd-agent.monitoring.svc`), a DNS
 * query per search domain. IPv4 as before (the socket is udp4). A failed lookup is not cached:
 * that send fails and is counted, and the next one asks again.
 */
import dns from 'node:dns';
import * as net from 'node:net';

/** How long a resolved address is used before the name is looked up again (hot-shots' cacheDnsTtl). */
export const STATSD_DNS_TTL_MS = 60_000;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string, family: number) => void;

/** dgram's `lookup` option: called as `(host, family, callback)` (or with an options object). */
export type SocketLookup = (host: string, options: unknown, callback: LookupCallback) => void;

/** A caching IPv4 `lookup` for a udp4 socket. */
export function cachedLookup4(ttlMs = STATSD_DNS_TTL_MS, nowMs: () => number = Date.now): SocketLookup {
  const cache = new Map<string, { readonly address: string; readonly atMs: number }>();
  return (host, options, callback) => {
    const cb = (typeof options === 'function' ? options : callback) as LookupCallback;
    if (net.isIPv4(host)) return cb(null, host, 4);
    const hit = cache.get(host);
    if (hit !== undefined && nowMs() - hit.atMs < ttlMs) return cb(null, hit.address, 4);
    dns.lookup(host, { family: 4 }, (err, address) => {
      if (err !== null) return cb(err, '', 4);
      cache.set(host, { address, atMs: nowMs() });
      cb(null, address, 4);
    });
  };
}
