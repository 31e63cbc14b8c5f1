/**
 * `npm run bench:status`: what an open status page costs the light model (`mlp`, the demo's
 * 784→10 MLP), served under autocannon. `status_page_on_vs_off` (goal ≥ 0.99): one server,
 * `BENCH_WINDOWS` (6) windows of 10 s with the page polling (`/status.json?since=T` once a
 * second, as the page's script does, after one GET /) and as many without, alternating (see
 * `alternating`), the req/s of the two kinds of window; beside it the frontend process's CPU per
 * request in each (`status_page_frontend_cpu_per_request_on_vs_off`, /proc). The windows of
 * one server still spread ±10 % on a 2-core VM, more than 1 %: the same run with the page
 * polling 16 times a second (`…_16hz`) lifts its cost above that, and
 * `status_page_on_vs_off_1hz_from_amplified` is what one poll a second costs by it
 * (1 − (1 − r16) / 16). Then the earlier
 * method, kept for comparison (`…_separate_servers`): pairs of back-to-back servers, one with the
 * page open and one without, alternating which goes first, the median pair — between two
 * processes the spread is wider than the page's cost. Every server first has requests on each
 * listener's express app (steady-state.ts says why). Then what the page costs an idle server:
 * the frontend's CPU ms a second with a page polling and no traffic, against none
 * (`status_page_idle_frontend_cpu_ms_per_s`, /proc), and the sampler's own CPU per 1 Hz sample in
 * process against the exposition render it replaced (`status_sampler_cpu_ms_per_s`, one model
 * and 50; status-sampler-cost.ts). `BENCH_SMOKE=1`: one short window each, one short pair,
 * short idle windows. */
import autocannon from 'autocannon';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MLP_HIDDEN, MLP_SEED, writeMlp } from '../models/mlp.js';
import { writeModelConfig } from '../models/model-config.js';
import { spawnServer } from './spawn-server.js';
import type { SpawnedServer } from './spawn-server.js';
import { printFigure } from './figure-line.js';
import { procCpuSeconds } from './proc-cpu.js';
import { samplerCost } from './status-sampler-cost.js';
import { servedByExpress } from './steady-state.js';

const SMOKE = process.env.BENCH_SMOKE === '1';
const PAIRS = SMOKE ? 1 : Number(process.env.BENCH_PAIRS ?? 3);
/** Windows of each kind in the one-server run (page polling, none). */
const WINDOWS = SMOKE ? 1 : Number(process.env.BENCH_WINDOWS ?? 6);
/** The amplified run's polls a second: under /status.json's limit of 20 a second, so none is refused. */
const AMPLIFIED_HZ = 16;
const MEASURE_S = SMOKE ? 1 : 10;
const WARMUP_S = SMOKE ? 1 : 2;
/** Seconds of each idle window (no traffic; /proc counts CPU in 10 ms ticks, so long ones). */
const IDLE_S = SMOKE ? 1 : 30;
/** In-process samples timed per figure. */
const SAMPLES = SMOKE ? 20 : 2000;

const note = (m: string): void => void process.stderr.write(`bench:status: ${m}\n`);

/** Polls the page's data once a second as its script does (GET / first unless `loaded`); returns the stop and the poll count. */
async function openPage(
  management: string,
  loaded = false,
  hz = 1,
): Promise<{ stop: () => void; polls: () => number }> {
  if (!loaded) await (await fetch(`${management}/`)).text();
  let since = 0;
  let polls = 0;
  const timer = setInterval(() => {
    void fetch(`${management}/status.json${since > 0 ? `?since=${since}` : ''}`)
      .then((r) => r.json() as Promise<{ charts: { requestsPerS: Array<[number, number | null]> } }>)
      .then((s) => {
        polls++;
        const last = s.charts.requestsPerS[s.charts.requestsPerS.length - 1];
        if (last !== undefined) since = last[0];
      })
      .catch(() => undefined);
  }, 1000 / hz);
  return { stop: () => clearInterval(timer), polls: () => polls };
}

/** The frontend's CPU ms a second over an idle window (a few requests first), with a page open when `page`. */
async function idle(store: string, root: string, tag: string, page: boolean): Promise<number> {
  const server = await spawnServer(
    ['--model-store', store, '--models', 'mlp=mlp', '--log-dir', path.join(root, `logs-${tag}`)],
    root,
  );
  let open: { stop: () => void } | null = null;
  try {
    await servedByExpress(server);
    const body = JSON.stringify(Array.from({ length: 784 }, () => 0.5));
    for (let i = 0; i < 10; i++)
      await (
        await fetch(`${server.inference}/predictions/mlp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        })
      ).arrayBuffer();
    if (page) open = await openPage(server.management);
    const pid = server.proc.pid ?? 0;
    const cpu0 = procCpuSeconds(pid);
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    return ((procCpuSeconds(pid) - cpu0) * 1000) / IDLE_S;
  } finally {
    open?.stop();
    const exited = new Promise<void>((r) => server.proc.once('exit', () => r()));
    server.proc.kill('SIGTERM');
    await exited;
  }
}

/** autocannon's options for the light load: 32 connections POSTing one 784-number row to the mlp. */
function lightLoad(server: SpawnedServer) {
  return {
    url: `${server.inference}/predictions/mlp`,
    method: 'POST' as const,
    connections: 32,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(Array.from({ length: 784 }, (_v, i) => ((i * 31 + 17) % 100) / 100)),
  };
}

/** Served requests/s of one run, with a 1 Hz poller of the page's data when `page`. */
async function run(
  store: string,
  root: string,
  tag: string,
  page: boolean,
): Promise<{ rps: number; polls: number; cpuPerRequest: number }> {
  const server = await spawnServer(
    ['--model-store', store, '--models', 'mlp=mlp', '--log-dir', path.join(root, `logs-${tag}`)],
    root,
  );
  let opened: { stop: () => void; polls: () => number } | null = null;
  try {
    const opts = lightLoad(server);
    // Both runs: health checks, scrapes and management calls first, as any running server has
    // had, so the page's run is not the only one whose light path has seen express's objects.
    await servedByExpress(server);
    await autocannon({ ...opts, duration: WARMUP_S });
    if (page) opened = await openPage(server.management);
    const pid = server.proc.pid ?? 0;
    const cpu0 = procCpuSeconds(pid);
    const r = await autocannon({ ...opts, duration: MEASURE_S });
    const cpu = procCpuSeconds(pid) - cpu0;
    if (r.non2xx > 0 || r.errors > 0) note(`warning: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    const polls = opened?.polls() ?? 0;
    return { rps: r.requests.total / MEASURE_S, polls, cpuPerRequest: cpu / Math.max(1, r.requests.total) };
  } finally {
    opened?.stop();
    const exited = new Promise<void>((r) => server.proc.once('exit', () => r()));
    server.proc.kill('SIGTERM');
    await exited;
  }
}

/**
 * One server, windows with the page polling and without, alternating (off on, on off, …: a
 * drift over the run weighs on both alike): the page's cost without the spread between two
 * server processes (their JIT and memory layout differ run to run by more than the page costs:
 * the separate-server pairs' A/A control spread 0.95–1.04 on a quiet machine). The page is
 * loaded (GET /) once, before the first window; its poller then runs in the "on" windows only.
 * The sampler, once started, samples at 1 Hz for 15 minutes: it runs in the "off" windows too
 * (0.04 ms of CPU a second, `status_sampler_cpu_ms_per_s`), so this measures the polls.
 */
async function alternating(
  store: string,
  root: string,
  windows: number,
  hz: number,
): Promise<{ on: number; off: number; onCpu: number; offCpu: number; polls: number }> {
  const server = await spawnServer(
    ['--model-store', store, '--models', 'mlp=mlp', '--log-dir', path.join(root, 'logs-alternating')],
    root,
  );
  const sum = { on: 0, off: 0, onCpu: 0, offCpu: 0, onN: 0, offN: 0, polls: 0 };
  try {
    const opts = lightLoad(server);
    await servedByExpress(server);
    await (await fetch(`${server.management}/`)).text();
    await autocannon({ ...opts, duration: WARMUP_S });
    const pid = server.proc.pid ?? 0;
    for (let k = 0; k < windows; k++)
      for (const page of k % 2 === 0 ? [false, true] : [true, false]) {
        const opened = page ? await openPage(server.management, true, hz) : null;
        const cpu0 = procCpuSeconds(pid);
        const r = await autocannon({ ...opts, duration: MEASURE_S });
        const cpu = procCpuSeconds(pid) - cpu0;
        opened?.stop();
        if (r.non2xx > 0 || r.errors > 0) note(`warning: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
        if (page) {
          sum.on += r.requests.total;
          sum.onCpu += cpu;
          sum.polls += opened?.polls() ?? 0;
        } else {
          sum.off += r.requests.total;
          sum.offCpu += cpu;
        }
      }
  } finally {
    const exited = new Promise<void>((r) => server.proc.once('exit', () => r()));
    server.proc.kill('SIGTERM');
    await exited;
  }
  const s = windows * MEASURE_S;
  return {
    on: sum.on / s,
    off: sum.off / s,
    onCpu: sum.onCpu / sum.on,
    offCpu: sum.offCpu / sum.off,
    polls: sum.polls,
  };
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-status-'));
  try {
    const dir = path.join(root, 'store', 'mlp');
    fs.mkdirSync(dir, { recursive: true });
    writeMlp(dir, { hidden: MLP_HIDDEN, seed: MLP_SEED });
    const cfg = { handler: 'onnx', model: 'model.onnx', batchSize: 32, maxBatchDelay: 5, minWorkers: 1, maxWorkers: 1 };
    writeModelConfig(dir, { ...cfg, responseTimeout: 60, threads: 1 }, 'bench:status light model');
    const emit = (bench: string, ours: number, baseline: number, unit: string, better?: 'lower'): void =>
      printFigure(bench, ours, baseline, unit, better !== undefined ? { better } : {});
    for (const hz of [1, AMPLIFIED_HZ]) {
      const alt = await alternating(path.dirname(dir), root, WINDOWS, hz);
      note(
        `one server, ${WINDOWS} windows of each (${MEASURE_S} s): page polling at ${hz} Hz ${alt.on.toFixed(1)} req/s (${alt.polls} polls), none ${alt.off.toFixed(1)} req/s; load ${os.loadavg()[0]!.toFixed(2)}`,
      );
      const tag = hz === 1 ? '' : `_${hz}hz`;
      emit(`status_page_on_vs_off${tag}`, alt.on, alt.off, 'req/s');
      emit(`status_page_frontend_cpu_per_request_on_vs_off${tag}`, alt.onCpu * 1e6, alt.offCpu * 1e6, 'us', 'lower');
      if (hz === 1) continue;
      // The cost of one poll a second, from `hz` of them: the page's loss lifted above the
      // windows' noise (a poll's cost is the same whether the next comes in 1 s or 1/hz s).
      const perPoll = (1 - alt.on / alt.off) / hz;
      emit('status_page_on_vs_off_1hz_from_amplified', alt.off * (1 - perPoll), alt.off, 'req/s');
    }
    const pairs: Array<{ on: number; off: number; polls: number; onCpu: number; offCpu: number }> = [];
    for (let i = 0; i < PAIRS; i++) {
      const p = { on: 0, off: 0, polls: 0, onCpu: 0, offCpu: 0 };
      for (const which of i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const r = await run(path.dirname(dir), root, `${which}-${i}`, which === 'on');
        p[which] = r.rps;
        if (which === 'on') {
          p.polls = r.polls;
          p.onCpu = r.cpuPerRequest;
        } else p.offCpu = r.cpuPerRequest;
      }
      pairs.push(p);
    }
    pairs.sort((a, b) => a.on / a.off - b.on / b.off);
    const mid = pairs[Math.floor((pairs.length - 1) / 2)]!;
    note(
      `pairs (page open / none, req/s): ${pairs.map((p) => `${p.on.toFixed(0)}/${p.off.toFixed(0)} (${p.polls} polls)`).join(', ')}; load ${os.loadavg()[0]!.toFixed(2)}`,
    );
    process.stdout.write(
      JSON.stringify({
        bench: 'status_page_on_vs_off_separate_servers',
        ours: Math.round(mid.on * 10) / 10,
        baseline: Math.round(mid.off * 10) / 10,
        unit: 'req/s',
        ratio: Math.round((mid.on / mid.off) * 1000) / 1000,
      }) + '\n',
    );
    // The frontend process's own CPU per request, page open vs none (the machine's noise cancels).
    const byCpu = [...pairs].sort((a, b) => a.onCpu / a.offCpu - b.onCpu / b.offCpu);
    const midCpu = byCpu[Math.floor((byCpu.length - 1) / 2)]!;
    process.stdout.write(
      JSON.stringify({
        bench: 'status_page_frontend_cpu_per_request_on_vs_off_separate_servers',
        ours: Math.round(midCpu.onCpu * 1e7) / 10,
        baseline: Math.round(midCpu.offCpu * 1e7) / 10,
        unit: 'us',
        ratio: Math.round((midCpu.onCpu / midCpu.offCpu) * 1000) / 1000,
        better: 'lower',
      }) + '\n',
    );
    const idleOn = await idle(path.dirname(dir), root, 'idle-on', true);
    const idleOff = await idle(path.dirname(dir), root, 'idle-off', false);
    note(`idle frontend CPU over ${IDLE_S} s (ms/s): page open ${idleOn.toFixed(2)}, none ${idleOff.toFixed(2)}`);
    process.stdout.write(
      JSON.stringify({
        bench: 'status_page_idle_frontend_cpu_ms_per_s',
        ours: Math.round(idleOn * 100) / 100,
        baseline: Math.round(idleOff * 100) / 100,
        unit: 'ms/s',
        // /proc counts 10 ms ticks: an idle window may count none.
        ratio: idleOff > 0 ? Math.round((idleOn / idleOff) * 1000) / 1000 : null,
        better: 'lower',
      }) + '\n',
    );
    for (const models of [1, 50]) {
      const c = await samplerCost(models, SAMPLES);
      process.stdout.write(
        JSON.stringify({
          bench: models === 1 ? 'status_sampler_cpu_ms_per_s' : `status_sampler_cpu_ms_per_s_${models}_models`,
          ours: Math.round(c.ours * 1000) / 1000,
          baseline: Math.round(c.baseline * 1000) / 1000,
          unit: 'ms/s',
          ratio: Math.round((c.ours / c.baseline) * 1000) / 1000,
          better: 'lower',
        }) + '\n',
      );
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
