/** One HTTP listener of the server, opened on its address with the handling every listener shares. */
import * as http from 'http';
import type { AddressInfo } from 'net';
import { accessLogListener } from './access-log.js';
import type { ListenAddress } from './address.js';
import { formatAddress } from './address.js';
import { clientErrorListener } from './client-error.js';
import { deferContinue } from './expect-continue.js';
import { headerTimeoutOptions } from './header-timeout.js';
import { listenError } from './listen-error.js';
import type { AccessLog } from '../log/log.js';

type Listener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** Opens one listener (access log first, client errors, deferred 100-continue, header timeout); rejects naming it and its flag. */
export function listen(
  app: Listener,
  addr: ListenAddress,
  name: string,
  access: AccessLog | undefined,
  headerTimeoutMs: number | undefined,
  count?: (status: number) => void,
): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(headerTimeoutOptions(headerTimeoutMs));
    // The access listener goes first: it must wrap the response before the app can answer.
    if (access !== undefined) server.on('request', accessLogListener(name, access));
    server.on('clientError', clientErrorListener(name, access, count));
    deferContinue(server);
    server.on('request', app);
    server.keepAliveTimeout = 65_000;
    // A bind failure names the listener and its flag (node's 'listen EADDRINUSE: address already in use' names neither).
    const failed = (e: NodeJS.ErrnoException): void => {
      reject(listenError(name, addr, e));
    };
    server.once('error', failed);
    server.listen(addr.port, addr.host, () => {
      server.off('error', failed);
      resolve(server);
    });
  });
}

/** The address a listener is bound to (its real port when it asked for 0). */
export function boundAddress(server: http.Server, host: string): string {
  const a = server.address() as AddressInfo;
  return formatAddress({ host, port: a.port });
}
