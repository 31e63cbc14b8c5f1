/**
 * The header timeout of every listener (`--header-timeout`): a client must send its request
 * line and headers within this many ms, or node answers `408 Request Timeout` and closes the
 * connection. Node checks its timeouts on a timer (30 s by default, which would stretch a short
 * timeout to half a minute), so the check runs at a quarter of the timeout, between 0.1 and 1 s.
 */
import type { ServerOptions } from 'http';

/** The default header timeout, ms (the body's `--request-timeout` default). */
export const DEFAULT_HEADER_TIMEOUT_MS = 30_000;

/** Largest header timeout: node refuses one above its whole-request timeout (300 s). */
export const MAX_HEADER_TIMEOUT_MS = 300_000;

/** `http.createServer` options enforcing `ms` (0 or absent: the default). */
export function headerTimeoutOptions(ms?: number): ServerOptions {
  const t = ms === undefined || ms <= 0 ? DEFAULT_HEADER_TIMEOUT_MS : Math.min(ms, MAX_HEADER_TIMEOUT_MS);
  return { headersTimeout: t, connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(t / 4))) };
}
