/** Listener addresses as TorchServe writes them: `http://HOST:PORT` (scheme optional). */

/** A parsed listener address. */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/** Parses `http://127.0.0.1:8080`, `127.0.0.1:8080` or `:8080`; throws with a clear message. */
export function parseAddress(flag: string, value: string): ListenAddress {
  let v = value.trim();
  if (v.startsWith(':')) v = `127.0.0.1${v}`;
  if (!/^[a-z]+:\/\//i.test(v)) v = `http://${v}`;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new Error(`${flag}: '${value}' is not an address like http://127.0.0.1:8080`);
  }
  if (u.protocol !== 'http:')
    throw new Error(`${flag}: only http:// is supported (got ${u.protocol}//); put a TLS proxy in front for https`);
  // URL drops a port equal to the scheme's default (80), so read it from the text then.
  const port = u.port !== '' ? Number(u.port) : /:(\d+)\/?$/.test(v) ? 80 : null;
  if (port === null) throw new Error(`${flag}: '${value}' has no port`);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host, port };
}

/** True for addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** Formats an address back into a URL. */
export function formatAddress(a: ListenAddress): string {
  return `http://${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;
}
