/**
 * `npm run bench:tracing`: what tracing costs. Each figure is the median-ratio pair of
 * back-to-back runs alternating which goes first (the machine is shared: drift hits both sides):
 *
 * - `tracing_on_vs_off_serve_light`: served req/s of the demo mlp (light: the frontend's cost per
 *   request shows) with `--otlp-traces-endpoint` at sampling 1.0 (`always_on`), exporting to an
 *   OTLP/HTTP receiver in this process that reads and drops each body, vs tracing off. Every
 *   request carries a `traceparent`, so the off side reads it too (the exemplars' trace id).
 * - `tracing_on_vs_off_serve_light_ceiling`: the most that figure can be with spans made by
 *   OpenTelemetry's SDK, from this run: the frontend's CPU a request with tracing off against that
 *   plus the SDK's own cost of the request's four spans (`tracing_sdk_spans_floor_vs_off_request_cpu`,
 *   measured in this process, tracing-floor.ts); `…_ceiling_serialized` (with
 *   `tracing_sdk_spans_serialized_floor_vs_off_request_cpu`): the same with the spans also
 *   protobuf-encoded by the shipped exporter's serializer, which the SDK's exporter does on the
 *   main thread.
 * - `tracing_ratio_0.1_vs_off_serve_light`: the same at `OTEL_TRACES_SAMPLER=traceidratio` 0.1.
 * - `tracing_on_vs_off_generate_http`: tokens/s of 32 concurrent streaming `/v1/completions` on
 *   tiny-lm (64-byte prompts, 32 new tokens), the same way.
 * - `tracing_off_vs_off_build_serve_light`: the light req/s of this build with tracing off vs a
 *   build without tracing (`BENCH_BASELINE_ROOT`: a built checkout of the commit before it, its
 *   `bin/tsserve.js` started); without that variable this build against itself, said on stderr.
 *
 * Each also as `…_cpu`: per CPU second of the frontend process (/proc), which a busy machine
 * moves less than the wall rate; tracing's work is all in that process.
 *
 * `BENCH_ONLY=light|generate|build` runs one group. Goals: on/off ≥ 0.95, off/off-build = 1.0 within noise. `BENCH_SMOKE=1`: one short pair each,
 * nothing judged.
 */
import autocannon from 'autocannon';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TINY_LM_MODEL } from '../models/demo-models.js';
import { procCpuSeconds } from './proc-cpu.js';
import { makeLightStore } from './serve-runs.js';
import { spawnServer, stopServer } from './spawn-server.js';
import { otlpReceiver } from './otlp-receiver.js';
import type { SpawnedServer } from './spawn-server.js';
import { SMOKE, smoke } from './smoke.js';
import { sdkSpansFloorUs } from './tracing-floor.js';

const PAIRS = SMOKE ? 1 : Number(process.env.BENCH_PAIRS ?? 3);
const MEASURE_S = smoke(8, 1);
const WARMUP_S = smoke(2, 1);
const CONNECTIONS = 64;
const STREAMS = 32;
const MAX_TOKENS = smoke(32, 4);
/** `BENCH_ONLY=light|generate|build`: one group of figures. */
const ONLY = process.env.BENCH_ONLY ?? '';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const note = (m: string): void => void process.stderr.write(`bench:tracing: ${m}\n`);

/** A server on `store` with `extra` flags (tracing's environment set only while it starts). */
async function start(
  store: string,
  root: string,
  tag: string,
  extra: readonly string[],
  cli?: string,
  sampler: readonly [string, string] = ['always_on', '1'],
): Promise<SpawnedServer> {
  const args = ['--model-store', store, '--log-dir', path.join(root, `logs-${tag}`), '--disable-system-metrics'];
  // The server inherits this process's environment as it starts.
  [process.env.OTEL_TRACES_SAMPLER, process.env.OTEL_TRACES_SAMPLER_ARG] = sampler;
  return spawnServer([...args, '--metrics-mode', 'prometheus', ...extra], root, cli);
}

/** A run's rate: per wall second, and per CPU second of the frontend process (robust to a busy machine). */
interface Rate {
  readonly perSec: number;
  readonly perCpuSec: number;
}

/** Served req/s of the light mlp. */
async function light(server: SpawnedServer): Promise<Rate> {
  const opts = {
    url: `${server.inference}/predictions/mlp`,
    method: 'POST' as const,
    connections: CONNECTIONS,
    headers: { 'content-type': 'application/json', traceparent: TRACEPARENT },
    body: JSON.stringify(Array.from({ length: 784 }, (_v, i) => ((i * 31 + 17) % 100) / 100)),
  };
  await autocannon({ ...opts, duration: WARMUP_S });
  const cpu0 = procCpuSeconds(server.proc.pid!);
  const r = await autocannon({ ...opts, duration: MEASURE_S });
  const cpu = procCpuSeconds(server.proc.pid!) - cpu0;
  if (r.non2xx > 0 || r.errors > 0) note(`warning: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  return { perSec: r.requests.total / MEASURE_S, perCpuSec: r.requests.total / cpu };
}

/** One streaming completion's token count. */
async function stream(base: string, i: number): Promise<number> {
  const res = await fetch(`${base}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: TRACEPARENT },
    body: JSON.stringify({
      model: 'tiny-lm',
      prompt: `stream ${i}: ${'once upon a time '.repeat(4)}`.slice(0, 64),
      max_tokens: MAX_TOKENS,
      ignore_eos: true,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
  const usage = /"completion_tokens":(\d+)/.exec(text.slice(text.lastIndexOf('"usage"')));
  return Number(usage?.[1] ?? 0);
}

/** Tokens/s of rounds of 32 concurrent streams for MEASURE_S seconds. */
async function generation(server: SpawnedServer): Promise<Rate> {
  const round = async (): Promise<number> =>
    (await Promise.all(Array.from({ length: STREAMS }, (_v, i) => stream(server.inference, i)))).reduce(
      (a, b) => a + b,
      0,
    );
  await round();
  const t0 = performance.now();
  const cpu0 = procCpuSeconds(server.proc.pid!);
  let tokens = 0;
  while (performance.now() - t0 < MEASURE_S * 1000) tokens += await round();
  const cpu = procCpuSeconds(server.proc.pid!) - cpu0;
  return { perSec: tokens / ((performance.now() - t0) / 1000), perCpuSec: tokens / cpu };
}

type Pair = { a: number; b: number };

/** `a` vs `b` runs, alternating which goes first: the pairs per wall second and per frontend CPU second. */
async function pairs(run: (side: 'a' | 'b', i: number) => Promise<Rate>): Promise<{ wall: Pair[]; cpu: Pair[] }> {
  const wall: Pair[] = [];
  const cpu: Pair[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const w = { a: 0, b: 0 };
    const c = { a: 0, b: 0 };
    for (const side of i % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
      const r = await run(side, i);
      w[side] = r.perSec;
      c[side] = r.perCpuSec;
    }
    wall.push(w);
    cpu.push(c);
  }
  return { wall, cpu };
}

/** The pair whose ratio is the median. */
function median(unsorted: readonly Pair[]): Pair {
  const all = [...unsorted].sort((x, y) => x.a / x.b - y.a / y.b);
  return all[Math.floor((all.length - 1) / 2)]!;
}

/** The JSON line of the pair whose ratio is the median. */
function line(bench: string, unsorted: readonly Pair[], unit: string): void {
  const all = [...unsorted].sort((x, y) => x.a / x.b - y.a / y.b);
  const mid = median(all);
  note(
    `${bench}: pairs ${all.map((p) => `${p.a.toFixed(0)}/${p.b.toFixed(0)}`).join(', ')}; load ${os.loadavg()[0]!.toFixed(2)}`,
  );
  const r1 = (x: number): number => Math.round(x * 10) / 10;
  process.stdout.write(
    JSON.stringify({
      bench,
      ours: r1(mid.a),
      baseline: r1(mid.b),
      unit,
      ratio: Math.round((mid.a / mid.b) * 1000) / 1000,
    }) + '\n',
  );
}

/** The two figures of `p`: `bench` (per second) and `bench_cpu` (per frontend CPU second). */
function lines(bench: string, p: { wall: Pair[]; cpu: Pair[] }, unit: string): void {
  line(bench, p.wall, `${unit}/s`);
  line(`${bench}_cpu`, p.cpu, `${unit} per frontend CPU-second`);
}

/**
 * The ceiling of the light figure in this run (tracing-floor.ts): the frontend's CPU a request
 * with tracing off (the median pair's) against that plus what the SDK alone spends on the
 * request's four spans, measured here and now.
 */
async function ceiling(cpu: readonly Pair[]): Promise<void> {
  const offUs = 1e6 / median(cpu).b;
  const floorUs = await sdkSpansFloorUs(smoke(50_000, 2_000), TRACEPARENT);
  const serializedUs = await sdkSpansFloorUs(smoke(50_000, 2_000), TRACEPARENT, true);
  {
    const r3 = (x: number): number => Math.round(x * 1000) / 1000;
    const out = (bench: string, ours: number, baseline: number, unit: string): void =>
      void process.stdout.write(
        JSON.stringify({ bench, ours: r3(ours), baseline: r3(baseline), unit, ratio: r3(ours / baseline) }) + '\n',
      );
    // ours: the SDK's µs a request; baseline: the traced-off frontend's µs a request.
    out(
      'tracing_sdk_spans_floor_vs_off_request_cpu',
      floorUs,
      offUs,
      'µs of CPU a request (4 SDK spans / frontend, tracing off)',
    );
    out('tracing_on_vs_off_serve_light_ceiling', offUs, offUs + floorUs, 'µs of CPU a request (off / off + SDK floor)');
    // The same with the spans also encoded as the shipped exporter encodes them (on the main thread).
    out(
      'tracing_sdk_spans_serialized_floor_vs_off_request_cpu',
      serializedUs,
      offUs,
      'µs of CPU a request (4 SDK spans made and protobuf-encoded / frontend, tracing off)',
    );
    out(
      'tracing_on_vs_off_serve_light_ceiling_serialized',
      offUs,
      offUs + serializedUs,
      'µs of CPU a request (off / off + SDK floor with serialization)',
    );
    note(
      `the SDK's 4 spans: ${floorUs.toFixed(1)} µs a request, ${serializedUs.toFixed(1)} µs serialized too; tracing off: ${offUs.toFixed(1)} µs; load ${os.loadavg()[0]!.toFixed(2)}`,
    );
  }
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-tracing-'));
  const rx = await otlpReceiver('/v1/traces');
  const traced = ['--otlp-traces-endpoint', rx.url];
  try {
    const lightStore = makeLightStore(root);
    const genStore = path.join(root, 'store-gen');
    fs.mkdirSync(path.join(genStore, TINY_LM_MODEL.name), { recursive: true });
    await TINY_LM_MODEL.write(path.join(genStore, TINY_LM_MODEL.name));
    const measured = async (
      store: string,
      tag: string,
      extra: readonly string[],
      f: (s: SpawnedServer) => Promise<Rate>,
      cli?: string,
      sampler?: readonly [string, string],
    ): Promise<Rate> => {
      const s = await start(store, root, tag, extra, cli, sampler);
      try {
        return await f(s);
      } finally {
        await stopServer(s);
      }
    };
    const want = (group: string): boolean => ONLY === '' || ONLY === group;
    if (want('light')) {
      const p = await pairs((side, i) => measured(lightStore, `l-${side}${i}`, side === 'a' ? traced : [], light));
      lines('tracing_on_vs_off_serve_light', p, 'req');
      await ceiling(p.cpu);
    }
    // What sampling buys: a traceidratio of 0.1 (the parent's sampled flag not followed).
    if (want('light'))
      lines(
        'tracing_ratio_0.1_vs_off_serve_light',
        await pairs((side, i) =>
          measured(lightStore, `r-${side}${i}`, side === 'a' ? traced : [], light, undefined, ['traceidratio', '0.1']),
        ),
        'req',
      );
    if (want('generate'))
      lines(
        'tracing_on_vs_off_generate_http',
        await pairs((side, i) => measured(genStore, `g-${side}${i}`, side === 'a' ? traced : [], generation)),
        'tok',
      );
    const baseRoot = process.env.BENCH_BASELINE_ROOT;
    const baseCli = baseRoot !== undefined ? path.resolve(baseRoot, 'bin', 'tsserve.js') : undefined;
    note(
      baseCli !== undefined
        ? `off vs off-build: baseline ${baseCli}`
        : 'off vs off-build: BENCH_BASELINE_ROOT not set, this build against itself',
    );
    if (want('build'))
      lines(
        'tracing_off_vs_off_build_serve_light',
        await pairs((side, i) => measured(lightStore, `o-${side}${i}`, [], light, side === 'a' ? undefined : baseCli)),
        'req',
      );
    note(`${rx.bodies()} OTLP trace bodies received`);
  } finally {
    await rx.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
