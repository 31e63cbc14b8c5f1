/** The error of a listener that could not bind, naming the listener and its flag. */
import type { ListenAddress } from './address.js';
import { formatAddress } from './address.js';

/**
 * `inference listener http://127.0.0.1:8080 (--inference-address): the address is already in
 * use`: node's `listen EADDRINUSE: address already in use` names neither. Used by the primary's
 * listeners and by the `--api-server-count` fronts, whose bind fails in their own process.
 */
export function listenError(
  name: string,
  addr: ListenAddress,
  e: { readonly code?: string | undefined; readonly message: string },
): Error {
  const why =
    e.code === 'EADDRINUSE'
      ? 'the address is already in use'
      : e.code === 'EACCES'
        ? 'permission denied (a port below 1024 needs privileges)'
        : e.code === 'EADDRNOTAVAIL'
          ? 'no interface of this machine has that address'
          : e.message;
  return new Error(`${name} listener ${formatAddress(addr)} (--${name}-address): ${why}`);
}
