/**
 * Requests node's HTTP parser refuses before any route sees them, against the real server: a
 * malformed request line, headers over node's 16 KiB, a negative Content-Length. Each gets the
 * status node answers (400, 431) on a closed connection, and counts in `Requests4XX` and the
 * access log exactly once, like every other response (they were answered by node and counted
 * nowhere).
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { configArgs } from './config-args.js';
import { generateStore, removeStores, sample, scrape, startTsserve } from './harness.js';
import type { Tsserve } from './harness.js';
import { until } from '../support/until.js';

const H = os.hostname();

/** Writes `bytes` on a fresh connection and resolves with everything the server sent before it closed. */
function rawExchange(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), hostname, () => s.write(bytes));
    let got = '';
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
    });
    s.on('error', reject);
    s.on('close', () => resolve(got));
  });
}

describe('requests the HTTP parser refuses (real tsserve start)', function () {
  this.timeout(60_000);
  let server: Tsserve;
  before(async () => {
    server = await startTsserve({
      store: generateStore(['mlp']),
      args: [...configArgs(), '--metrics-mode', 'prometheus', '--disable-system-metrics'],
    });
  });
  after(() => {
    server?.kill();
    removeStores();
  });

  it('should answer 400 and 431 as node does and count each once in Requests4XX and the access log, on both listeners', async () => {
    const requests4xx = async (): Promise<number> =>
      sample(await scrape(server), `Requests4XX{Level="Host",Hostname="${H}"}`) ?? 0;
    const before = await requests4xx();
    const answers = [
      await rawExchange(server.inference, 'FOO /ping HTTP/1.1\r\nHost: x\r\n\r\n'),
      await rawExchange(server.inference, `GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`),
      await rawExchange(server.inference, 'POST /predictions/mlp HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'),
      await rawExchange(server.management, 'GET /models HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'),
    ];
    expect(answers).to.deep.equal([
      'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n',
      'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
      'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n',
      'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n',
    ]);
    expect((await requests4xx()) - before).to.equal(4);
    // The access log is written in blocks or every 200 ms: wait for the four lines.
    const refused = await until(
      () => {
        const file = path.join(server.logDir, 'access_log.log');
        const recs = fs.existsSync(file)
          ? fs
              .readFileSync(file, 'utf8')
              .split('\n')
              .filter((l) => l !== '')
              .map((l) => JSON.parse(l) as Record<string, unknown>)
          : [];
        const mine = recs.filter((r) => r.method === '');
        return mine.length >= 4 ? mine : null;
      },
      { message: 'four access records of refused requests' },
    );
    expect(refused.map((r) => [r.listener, r.status, r.path, r.bytes])).to.deep.equal([
      ['inference', 400, '', 0],
      ['inference', 431, '', 0],
      ['inference', 400, '', 0],
      ['management', 400, '', 0],
    ]);
  });
});
