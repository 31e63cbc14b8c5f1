/**
 * bench:serve — the model server under load (autocannon, in-process, 64 connections) against
 * raw in-process onnxruntime at batch 32 on the same thread budget, on two models:
 *
 * - `mlp-heavy` (compute-bound): the server's one worker (onnxruntime, 1 thread) on core 0;
 *   the frontend and this process (autocannon) on core 1; the raw baseline alone on core 0.
 * - the demo `mlp` (light: the frontend's cost per request shows): the whole server (frontend
 *   and its one worker) on core 0, autocannon on core 1; the raw baseline alone on core 0.
 *
 * Prints one JSON line per figure: serve_vs_raw_ort (split in serve_vs_raw_ort_session_ceiling
 * and serve_vs_session), batch32_vs_batch1, metrics_on_vs_off (mlp-heavy); serve_light_vs_raw_ort, serve_binary_vs_json, serve_oip_vs_predictions (an Open
 * Inference Protocol JSON request vs the same input as a /predictions JSON body),
 * metrics_on_vs_off_light and metrics_on_vs_off_light_floor (the best it could be: the off
 * server plus the least the sinks' text costs, tools/bench/sink-floor.ts) (mlp).
 * The server as shipped: the repo's metrics.yaml, tslog + prometheus; "on" is all three sinks,
 * "off" `--metrics-mode off`. Notes (CPU split, per-process CPU busy) go to stderr.
 * `BENCH_ONLY=light|heavy` runs one half, `BENCH_ONLY=metrics` only the light on/off pairs;
 * `BENCH_PAIRS=N` (default 3) measures on/off as N pairs (alternating which goes first) and
 * mlp-heavy's served/raw as N raw-then-served rounds, each figure the pair or round with the
 * median ratio; `BENCH_ONLY=sinks` notes each sink's CPU alone (a diagnosis).
 */
import * as dgram from 'dgram';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { FLOOR_POINTS_PER_REQUEST, sinkFloorUsPerRequest } from './sink-floor.js';
import {
  CONNECTIONS,
  HAVE_TASKSET,
  LIGHT,
  MEASURE_S,
  WARMUP_S,
  fullBatchPredictionMs,
  httpFloorCpuPerRequest,
  lastCpuPerItem,
  lastCpuSplit,
  makeLightStore,
  makeStore,
  note,
  pin,
  rawOrt,
  served,
} from './serve-runs.js';
import { SMOKE, smoke } from './smoke.js';
import { printFigure } from './figure-line.js';

const line = (bench: string, ours: number, baseline: number, unit: string): void =>
  printFigure(bench, ours, baseline, unit);

/** On/off pairs measured back to back (`BENCH_PAIRS`, default 3), alternating which goes first. */
const PAIRS = Number(process.env.BENCH_PAIRS ?? smoke(3, 1));

/**
 * Metrics on (all three sinks) vs `--metrics-mode off`, as paired runs: each pair is an on run
 * and an off run back to back (alternating which goes first), and the figure is the pair whose
 * on/off ratio is the median of the pairs' (the lower middle one for an even count), so
 * `ours / baseline` is that pair's own two throughputs. Paired because on this shared VM a
 * server start lands in a fast or a slow state (the same setting measured 3,400 and 3,900
 * samples/s in consecutive starts), which a median of ons over a median of offs mixes in.
 */
async function onOff(
  run: (tag: string, extra: readonly string[]) => Promise<number>,
  allSinks: readonly string[],
): Promise<{ on: number; off: number; onCpu: number; offCpu: number }> {
  const pairs: Array<{ on: number; off: number; onCpu: number; offCpu: number }> = [];
  for (let i = 0; i < PAIRS; i++) {
    const first = i % 2 === 0 ? 'on' : 'off';
    const p = { on: 0, off: 0, onCpu: 0, offCpu: 0 };
    for (const which of first === 'on' ? ['on', 'off'] : ['off', 'on']) {
      const r = await run(`${which}-${i}`, which === 'on' ? allSinks : ['--metrics-mode', 'off']);
      if (which === 'on') {
        p.on = r;
        p.onCpu = lastCpuPerItem;
      } else {
        p.off = r;
        p.offCpu = lastCpuPerItem;
      }
    }
    pairs.push(p);
  }
  const byRatio = [...pairs].sort((a, b) => a.on / a.off - b.on / b.off);
  if (PAIRS > 1)
    note(
      `on/off pairs: ${pairs.map((x) => `${x.on.toFixed(0)}/${x.off.toFixed(0)} (${(x.on / x.off).toFixed(3)})`).join(', ')}`,
    );
  return byRatio[(byRatio.length - 1) >> 1]!;
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-serve-'));
  // A StatsD socket that receives and discards, so the statsd sink does real sends.
  const sink = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => sink.bind(0, '127.0.0.1', resolve));
  sink.on('message', () => undefined);
  try {
    note(
      HAVE_TASKSET
        ? 'CPU split: server worker (onnxruntime, 1 thread) pinned to core 0; frontend + autocannon pinned to core 1; raw baseline alone on core 0'
        : 'CPU split: taskset not found, processes unpinned (worker 1 thread; frontend and autocannon share the other core by the scheduler)',
    );
    note(`autocannon: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up, ${MEASURE_S} s measured per run`);
    pin(process.pid, 1);
    const only = process.env.BENCH_ONLY ?? '';
    const allSinks = [
      '--metrics-mode',
      'tslog,prometheus,statsd',
      '--statsd-address',
      `127.0.0.1:${sink.address().port}`,
    ];
    // The raw baseline, alone on core 0 (the light model: before and after its served runs, the
    // mean of both; mlp-heavy: before each served round), so drift on this shared machine hits
    // ours and the baseline alike.
    const rawRun = async (file: string): Promise<number> => {
      pin(process.pid, 0);
      const r = await rawOrt(file, 32);
      pin(process.pid, 1);
      note(`raw onnxruntime batch 32 (${path.basename(path.dirname(file))}): ${r.toFixed(1)} samples/s`);
      return r;
    };

    // The best metrics_on_vs_off_light could be: the off server's CPU per request plus the
    // least the sinks' text can cost (tools/bench/sink-floor.ts, measured here on core 1).
    const floorLine = async (offCpu: number): Promise<void> => {
      const floorUs = await sinkFloorUsPerRequest(sink.address().port);
      note(
        `sink floor: ${floorUs.toFixed(2)} µs CPU a request (${FLOOR_POINTS_PER_REQUEST} datapoints as TorchServe log lines and StatsD lines) against ${(offCpu * 1e6).toFixed(0)} µs a request with metrics off`,
      );
      line('metrics_on_vs_off_light_floor', 1 / (offCpu + floorUs / 1e6), 1 / offCpu, 'req per CPU-second');
    };

    if (only !== 'heavy' && only !== 'metrics' && only !== 'sinks') {
      const light = makeLightStore(root);
      const file = path.join(light, 'mlp', 'model.onnx');
      note('light: demo mlp, batch 32, 5 ms; whole server (frontend + worker) on core 0, autocannon on core 1');
      if (!SMOKE) await served(light, root, 'light-warm-up', [], LIGHT);
      const raw1 = await rawRun(file);
      const rawCpu1 = lastCpuPerItem;
      const json = await served(light, root, 'light-json', [], LIGHT);
      const jsonCpu = lastCpuPerItem;
      const frontCpu = lastCpuSplit[1];
      const floorCpu = await httpFloorCpuPerRequest();
      note(
        `light frontend ${(frontCpu * 1e6).toFixed(1)} µs CPU a request (worker ${(lastCpuSplit[0] * 1e6).toFixed(1)} µs) vs bare node:http ${(floorCpu * 1e6).toFixed(1)} µs`,
      );
      note(
        `light served, JSON bodies: ${json.toFixed(1)} req/s, ${(jsonCpu * 1e6).toFixed(0)} µs server CPU per request`,
      );
      const bin = await served(light, root, 'light-binary', [], { ...LIGHT, body: 'binary' });
      const binCpu = lastCpuPerItem;
      note(
        `light served, binary bodies: ${bin.toFixed(1)} req/s, ${(binCpu * 1e6).toFixed(0)} µs server CPU per request`,
      );
      const oip = await served(light, root, 'light-oip', [], { ...LIGHT, body: 'oip' });
      const oipCpu = lastCpuPerItem;
      note(
        `light served, Open Inference Protocol JSON: ${oip.toFixed(1)} req/s, ${(oipCpu * 1e6).toFixed(0)} µs server CPU per request`,
      );
      const { on, off, onCpu, offCpu } = await onOff(
        (tag, extra) => served(light, root, `light-${tag}`, extra, LIGHT),
        allSinks,
      );
      note(
        `light served, all sinks ${on.toFixed(1)}, metrics off ${off.toFixed(1)} req/s; server CPU per request ${(onCpu * 1e6).toFixed(0)} vs ${(offCpu * 1e6).toFixed(0)} µs`,
      );
      const raw = (raw1 + (await rawRun(file))) / 2;
      const rawCpu = (rawCpu1 + lastCpuPerItem) / 2;
      note(`raw onnxruntime: ${(rawCpu * 1e6).toFixed(1)} µs CPU per sample`);
      line('serve_light_vs_raw_ort', json, raw, 'samples/s');
      // The same per CPU-second used (what each would do with the core to itself).
      line('serve_light_vs_raw_ort_cpu', 1 / jsonCpu, 1 / rawCpu, 'samples per CPU-second');
      // The frontend's own CPU a request over a bare node:http server's on the same body (≤ 2).
      line('frontend_cpu_per_request_vs_http_floor', frontCpu * 1e6, floorCpu * 1e6, 'µs CPU per request');
      line('serve_binary_vs_json', bin, json, 'req/s');
      line('serve_binary_vs_json_cpu', 1 / binCpu, 1 / jsonCpu, 'req per CPU-second');
      line('serve_oip_vs_predictions', oip, json, 'req/s');
      line('metrics_on_vs_off_light', on, off, 'req/s');
      line('metrics_on_vs_off_light_cpu', 1 / onCpu, 1 / offCpu, 'req per CPU-second');
      await floorLine(offCpu);
    }
    if (only === 'metrics') {
      const light = makeLightStore(root);
      if (!SMOKE) await served(light, root, 'light-warm-up', [], LIGHT);
      const { on, off, onCpu, offCpu } = await onOff(
        (tag, extra) => served(light, root, `light-${tag}`, extra, LIGHT),
        allSinks,
      );
      line('metrics_on_vs_off_light', on, off, 'req/s');
      line('metrics_on_vs_off_light_cpu', 1 / onCpu, 1 / offCpu, 'req per CPU-second');
      await floorLine(offCpu);
      return;
    }
    if (only === 'sinks') {
      // Each sink alone vs off on the light model, repeated: where the metrics' CPU goes, by
      // process. Notes only (no figure line): a diagnosis, not a goal.
      const light = makeLightStore(root);
      if (!SMOKE) await served(light, root, 'light-warm-up', [], LIGHT);
      const modes: Array<[string, readonly string[]]> = [
        ['off', ['--metrics-mode', 'off']],
        ['prometheus', ['--metrics-mode', 'prometheus']],
        ['tslog', ['--metrics-mode', 'tslog']],
        ['statsd', ['--metrics-mode', 'statsd', '--statsd-address', `127.0.0.1:${sink.address().port}`]],
        ['all', allSinks],
      ];
      for (let i = 0; i < PAIRS; i++) {
        for (const [name, extra] of modes) {
          const r = await served(light, root, `sinks-${name}-${i}`, extra, LIGHT);
          note(
            `sinks ${name}: ${r.toFixed(0)} req/s; µs CPU a request: worker ${(lastCpuSplit[0] * 1e6).toFixed(0)}, frontend ${(lastCpuSplit[1] * 1e6).toFixed(0)}`,
          );
        }
      }
      return;
    }
    if (only === 'light') return;

    const b32 = makeStore(root, 32);
    const b1 = makeStore(root, 1);
    const heavyFile = path.join(b32, 'mlp-heavy', 'model.onnx');
    // One discarded served run first: the in-process load generator and the first server start
    // are cold otherwise, which handicapped whichever served run came first.
    if (!SMOKE) await served(b32, root, 'warm-up', []);

    // ours = the server as shipped (the repo's metrics.yaml: tslog + prometheus), measured as
    // BENCH_PAIRS rounds of raw-then-served; the figure is the round with the median ratio (its
    // own two throughputs), so a slow spell of the host lands on both sides of one ratio.
    // Each round also reads the served worker's own onnxruntime time per full batch (the
    // server's PredictionTime): what the model alone ran at while served, beside the frontend.
    const rounds: Array<{ raw: number; served: number; session: number }> = [];
    for (let i = 0; i < PAIRS; i++) {
      const raw = await rawRun(heavyFile);
      const s = await served(b32, root, `default-${i}`, []);
      const predMs = fullBatchPredictionMs(path.join(root, `logs-default-${i}`), 32);
      if (Number.isNaN(predMs))
        note(
          `  [default-${i}] warning: no full batch's PredictionTime in its model_metrics.log; the session ceiling of this round is unknown (null)`,
        );
      note(
        `  [default-${i}] worker's onnxruntime time per full batch ${predMs.toFixed(2)} ms (${(32000 / predMs).toFixed(0)} samples/s) vs raw ${(32000 / raw).toFixed(2)} ms`,
      );
      rounds.push({ raw, served: s, session: 32000 / predMs });
    }
    if (PAIRS > 1)
      note(
        `served/raw rounds: ${rounds.map((x) => `${x.served.toFixed(0)}/${x.raw.toFixed(0)} (${(x.served / x.raw).toFixed(3)}; model alone while served ${(x.session / x.raw).toFixed(3)})`).join(', ')}`,
      );
    const median = [...rounds].sort((a, b) => a.served / a.raw - b.served / b.raw)[(rounds.length - 1) >> 1]!;
    const dflt = median.served;
    note(`served batch 32, default metrics (tslog,prometheus): ${dflt.toFixed(1)} samples/s`);
    const { on, off, onCpu, offCpu } = await onOff((tag, extra) => served(b32, root, tag, extra), allSinks);
    note(
      `served batch 32, all three sinks: ${on.toFixed(1)} samples/s, ${(onCpu * 1e6).toFixed(0)} µs server CPU per request`,
    );
    note(
      `served batch 32, metrics off: ${off.toFixed(1)} samples/s, ${(offCpu * 1e6).toFixed(0)} µs server CPU per request`,
    );
    const one = await served(b1, root, 'b1', []);
    note(`served batch 1, default metrics: ${one.toFixed(1)} samples/s`);

    line('serve_vs_raw_ort', dflt, median.raw, 'samples/s');
    // The same round split in two: the worker's onnxruntime while served vs the raw loop (what
    // the frontend and load generator on the other core cost the model through the shared L3:
    // no serving overhead can raise served/raw above it), and served vs that (the server's own
    // overhead: IPC, handler, waiting for batches).
    line('serve_vs_raw_ort_session_ceiling', median.session, median.raw, 'samples/s');
    line('serve_vs_session', dflt, median.session, 'samples/s');
    line('batch32_vs_batch1', dflt, one, 'samples/s');
    line('metrics_on_vs_off', on, off, 'samples/s');
    line('metrics_on_vs_off_cpu', 1 / onCpu, 1 / offCpu, 'samples per CPU-second');
  } finally {
    sink.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:serve failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
