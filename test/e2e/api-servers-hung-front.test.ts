/**
 * `--api-server-count 2` with a front whose event loop is blocked for good (the test hooks of
 * frontend/cluster/test-hooks.ts: SIGUSR2 hangs a front, heartbeats every second). The primary
 * finds it by its unanswered heartbeats, kills it with SIGKILL, counts and logs it, and starts
 * another; meanwhile the other front serves every new connection.
 */
import { expect } from 'chai';
import * as os from 'os';
import { generateStore, mlpInput, post, startTsserve } from './harness.js';
import { freshPost } from './fresh-post.js';
import type { Tsserve } from './harness.js';
import { HEARTBEAT_ENV, STALL_ENV } from '../../frontend/cluster/test-hooks.js';
import { until } from '../support/until.js';

/** The value of one sample line of the exposition (0 when absent). */
function sample(text: string, line: string): number {
  for (const l of text.split('\n')) if (l.startsWith(line + ' ')) return Number(l.slice(line.length + 1));
  return 0;
}

describe('api servers: a hung front (--api-server-count 2)', function () {
  this.timeout(180_000);
  let server: Tsserve;
  const host = os.hostname();
  const infer = `ts_inference_requests_total{model_name="mlp",model_version="default",hostname="${host}"}`;
  const restarts = `tsserve_front_restarts_total{Hostname="${host}"}`;

  before(async () => {
    server = await startTsserve({
      store: generateStore(['mlp']),
      args: ['--api-server-count', '2', '--metrics-mode', 'prometheus'],
      env: { [STALL_ENV]: 'forever', [HEARTBEAT_ENV]: '1000' },
    });
  });
  after(() => server.kill());

  const scrape = async (): Promise<string> => (await fetch(`${server.metrics}/metrics`)).text();
  const pids = (text: string): number[] =>
    [...text.matchAll(/^process_cpu_user_seconds_total\{pid="(\d+)"\} /gm)]
      .map((m) => Number(m[1]))
      .filter((p) => p !== server.proc.pid);

  it('should kill the hung front with SIGKILL, log its pid and silence, count it in tsserve_front_restarts_total and start another, the other front serving meanwhile', async () => {
    const t0 = await scrape();
    const [hung, other] = pids(t0);
    const body = JSON.stringify(mlpInput(2));
    // A fresh connection per request: the hung front never accepts one, the other takes them all.
    const one = (): Promise<string> => freshPost(server.inference, body);
    const outcomes: Record<string, number> = {};
    let stop = false;
    process.kill(hung!, 'SIGUSR2');
    const loops = Array.from({ length: 4 }, async () => {
      while (!stop) {
        const r = await one();
        outcomes[r] = (outcomes[r] ?? 0) + 1;
      }
    });
    const t1 = await until(
      async () => {
        const t = await scrape();
        const now = pids(t);
        return now.length === 2 && !now.includes(hung!) ? t : null;
      },
      { message: 'a new front in place of the hung one', observe: () => outcomes },
    );
    stop = true;
    await Promise.all(loops);
    // Served by the other front, or (one that reached the hung front the moment it blocked)
    // cut by its kill; none waits on a front that no longer runs.
    expect(
      Object.keys(outcomes).filter((k) => k !== '200' && k !== 'ECONNRESET'),
      JSON.stringify(outcomes),
    ).to.deep.equal([]);
    expect(pids(t1)).to.include(other);
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.includes(`front process ${hung}`))
      .map((l) =>
        /front process .*/
          .exec(l)![0]
          .replace(/silent for \d+\.\d s/, 'silent for S s')
          .replace(/["}].*$/, ''),
      );
    expect(lines).to.deep.equal([
      `front process ${hung} answered none of its last 3 heartbeats (one every 1000 ms) and was silent for S s: its event loop is blocked; killing it (SIGKILL)`,
      `front process ${hung} exited (SIGKILL); starting another (restart 1)`,
    ]);
    const served = outcomes['200'] ?? 0;
    await until(async () => sample(await scrape(), infer) === sample(t0, infer) + served, {
      message: `${served} requests counted`,
    });
    for (let i = 0; i < 10; i++)
      expect((await post(`${server.inference}/predictions/mlp`, mlpInput(i))).status).to.equal(200);
    const t2 = await until(
      async () => {
        const t = await scrape();
        return sample(t, infer) === sample(t0, infer) + served + 10 ? t : null;
      },
      { message: '10 more requests counted' },
    );
    expect([sample(t0, restarts), sample(t2, restarts)]).to.deep.equal([0, 1]);
  });
});
