/**
 * bench:ladder — where the light model's frontend CPU per request goes, as a ladder of servers
 * under the same load (autocannon, 64 connections, the demo `mlp`'s 784-number JSON body),
 * each rung's process CPU per request read from /proc:
 *
 * 1. `floor`: a bare node:http server reading the body (tools/bench/http-floor.ts);
 * 2. `decode`: the same server decoding each body with tsserve's JSON tensor decoder;
 * 3. `off`: tsserve's frontend with `--metrics-mode off` (its worker on the same core);
 * 4. `default`: the metrics as shipped (tslog, prometheus);
 * 5. `all`: all three sinks (statsd to a socket here that reads and drops).
 *
 * There is no bare-express rung: `POST /predictions/{model}` is served before express
 * (frontend/http/route-table.ts), so express is on no step of this route. Every rung runs on
 * core 0, autocannon on core 1. `BENCH_PAIRS` rounds (default 3), each running every rung once,
 * the first rung of each round rotating; a rung's figure is the median of its rounds.
 * Prints `{"bench","ours","baseline","unit","ratio"}` lines, one per step up the ladder, and
 * `ladder_all_vs_floor` for the whole climb.
 */
import * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LIGHT, httpFloorCpuPerRequest, lastCpuSplit, makeLightStore, note, pin, served } from './serve-runs.js';
import { smoke } from './smoke.js';

const ROUNDS = Number(process.env.BENCH_PAIRS ?? smoke(3, 1));

type Rung = 'floor' | 'decode' | 'off' | 'default' | 'all';
const RUNGS: readonly Rung[] = ['floor', 'decode', 'off', 'default', 'all'];

function line(bench: string, ours: number, baseline: number): void {
  process.stdout.write(
    JSON.stringify({
      bench,
      ours: Math.round(ours * 10) / 10,
      baseline: Math.round(baseline * 10) / 10,
      unit: 'µs CPU per request (frontend process)',
      ratio: Math.round((ours / baseline) * 1000) / 1000,
    }) + '\n',
  );
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-ladder-'));
  const sink = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => sink.bind(0, '127.0.0.1', resolve));
  sink.on('message', () => undefined);
  try {
    pin(process.pid, 1);
    const store = makeLightStore(root);
    const modes: Record<'off' | 'default' | 'all', readonly string[]> = {
      off: ['--metrics-mode', 'off'],
      default: [],
      all: ['--metrics-mode', 'tslog,prometheus,statsd', '--statsd-address', `127.0.0.1:${sink.address().port}`],
    };
    const rungUs = async (rung: Rung, tag: string): Promise<number> => {
      if (rung === 'floor' || rung === 'decode')
        return (await httpFloorCpuPerRequest(rung === 'floor' ? 'bare' : 'decode')) * 1e6;
      await served(store, root, `${rung}-${tag}`, modes[rung], LIGHT);
      return lastCpuSplit[1] * 1e6;
    };
    const runs = new Map<Rung, number[]>(RUNGS.map((r) => [r, []]));
    for (let i = 0; i < ROUNDS; i++) {
      for (let k = 0; k < RUNGS.length; k++) {
        const rung = RUNGS[(i + k) % RUNGS.length]!;
        const us = await rungUs(rung, String(i));
        runs.get(rung)!.push(us);
        note(`round ${i} ${rung}: ${us.toFixed(1)} µs CPU a request (load ${os.loadavg()[0]!.toFixed(2)})`);
      }
    }
    const fig = (r: Rung): number => median(runs.get(r)!);
    line('ladder_decode_vs_floor', fig('decode'), fig('floor'));
    line('ladder_metrics_off_vs_decode', fig('off'), fig('decode'));
    line('ladder_default_vs_metrics_off', fig('default'), fig('off'));
    line('ladder_all_sinks_vs_default', fig('all'), fig('default'));
    line('ladder_all_vs_floor', fig('all'), fig('floor'));
  } finally {
    sink.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:ladder failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
