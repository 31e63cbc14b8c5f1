import { expect } from 'chai';
import dns from 'node:dns';
import { cachedLookup4 } from '../../../../frontend/metrics/sinks/statsd-lookup.js';
import type { SocketLookup } from '../../../../frontend/metrics/sinks/statsd-lookup.js';

describe('cachedLookup4', () => {
  const original = dns.lookup;
  let asked: string[] = [];
  let fail = false;
  beforeEach(() => {
    asked = [];
    fail = false;
    // A fake resolver: records each question (name and family) and answers 10.0.0.<n>.
    dns.lookup = ((
      host: string,
      opts: { family?: number },
      cb: (e: NodeJS.ErrnoException | null, a: string, f: number) => void,
    ) => {
      asked.push(`${host}/${String(opts.family)}`);
      if (fail) cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), '', 0);
      else cb(null, `10.0.0.${asked.length}`, 4);
    }) as unknown as typeof dns.lookup;
  });
  afterEach(() => {
    dns.lookup = original;
  });

  const ask = (lookup: SocketLookup, host: string): Promise<string> =>
    new Promise((resolve) =>
      lookup(host, 4, (err, address) => resolve(err === null ? address : `error ${err.message}`)),
    );

  it('should ask for a name once per ttl, IPv4 only, answer an IP in place and never cache a failure', async () => {
    let now = 0;
    const lookup = cachedLookup4(60_000, () => now);
    expect(await ask(lookup, 'agent')).to.equal('10.0.0.1');
    now = 59_999;
    expect(await ask(lookup, 'agent')).to.equal('10.0.0.1');
    now = 60_000;
    expect(await ask(lookup, 'agent')).to.equal('10.0.0.2');
    expect(await ask(lookup, '127.0.0.1')).to.equal('127.0.0.1');
    fail = true;
    expect(await ask(lookup, 'other')).to.equal('error getaddrinfo ENOTFOUND other');
    fail = false;
    expect(await ask(lookup, 'other')).to.equal('10.0.0.4');
    expect(asked).to.deep.equal(['agent/4', 'agent/4', 'other/4', 'other/4']);
  });
});
