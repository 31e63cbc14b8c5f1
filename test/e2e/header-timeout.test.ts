/**
 * `--header-timeout` against the real server: a client that sends its headers a few bytes at
 * a time, slower than the timeout, gets node's `408 Request Timeout` and a closed connection,
 * while a normal client is served meanwhile.
 */
import { expect } from 'chai';
import * as net from 'net';
import { generateStore, mlpInput, post, startTsserve } from './harness.js';
import type { Tsserve } from './harness.js';

/** Sends `lines`, then more header lines, one every `gapMs` until the server closes; resolves with what it sent back. */
function slowHeaders(url: string, lines: readonly string[], gapMs: number): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), hostname);
    let got = '';
    let i = 0;
    let timer: NodeJS.Timeout | null = null;
    const next = (): void => {
      if (s.destroyed) return;
      s.write(i < lines.length ? lines[i]! : `X-Slow-${i}: 1\r\n`);
      i++;
      timer = setTimeout(next, gapMs);
    };
    s.on('connect', next);
    s.on('error', reject);
    s.on('data', (d: Buffer) => {
      got += d.toString('utf8');
    });
    s.on('close', () => {
      if (timer !== null) clearTimeout(timer);
      resolve(got);
    });
  });
}

describe('header timeout (--header-timeout)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  before(async () => {
    server = await startTsserve({ store: generateStore(['mlp']), args: ['--header-timeout', '1000'] });
  });
  after(() => server.kill());

  it('should answer 408 and close a connection whose headers take longer than the timeout, serving others meanwhile', async () => {
    const slow = slowHeaders(server.inference, ['POST /predictions/mlp HTTP/1.1\r\n', 'Host: x\r\n'], 300);
    const served = await post(`${server.inference}/predictions/mlp`, mlpInput(1));
    const answer = await slow;
    expect(served.status).to.equal(200);
    expect(answer).to.equal('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
  });
});
