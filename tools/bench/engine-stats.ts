/**
 * `npm run bench:engine-stats`: what an engine step's scheduler stats cost on the channel as
 * they travel today, inside the step's `tsserve.gen.step` message (seven numbers in `stats`),
 * against the one flush contract: the step without them plus a `tsserve.metrics` message from
 * the shared flusher (schema/flush/) carrying the same seven values as datapoints, decoded by
 * the frontend's validator. Both sides are serialized and deserialized with V8's serializer,
 * as `process.send` with `serialization: 'advanced'` does. One JSON line, ns per step (lower is
 * better). `BENCH_SMOKE=1`: a few steps only, judging nothing.
 */
import * as v8 from 'node:v8';
import { DropLedger } from '../../schema/flush/drop-ledger.js';
import { MetricsFlusher } from '../../schema/flush/flusher.js';
import { decodeFromGenWorkerMessage } from '../../schema/engine-ipc.js';
import { decodeMetricsMessage } from '../../schema/ipc.js';
import type { GenSchedulerStats, GenStepMessage } from '../../schema/engine-ipc.js';
import type { MetricsMessage } from '../../schema/ipc.js';
import { SMOKE, smoke } from './smoke.js';

const STEPS = smoke(20_000, 200);
const ROUNDS = smoke(5, 1);

/** A decode step of 16 running sequences, one token each. */
function step(stats: GenSchedulerStats | undefined): GenStepMessage {
  return {
    type: 'tsserve.gen.step',
    engine: 0,
    timestamp: 1234.5,
    outputs: Array.from({ length: 16 }, (_, i) => ({
      requestId: `req-${i}`,
      index: 0,
      newTokenIds: [100 + i],
      text: 'a',
      events: [],
    })),
    numPromptTokens: 0,
    numGenerationTokens: 16,
    ...(stats !== undefined ? { stats } : {}),
  };
}

const STATS: GenSchedulerStats = {
  numRunning: 16,
  numWaiting: 2,
  kvCacheUsage: 0.4375,
  prefixCacheQueries: 0,
  prefixCacheHits: 0,
  numPreemptions: 0,
  numSteps: 1,
};
const FIELDS = Object.keys(STATS) as (keyof GenSchedulerStats)[];

/** ns per step of `fn` over STEPS steps: the median of ROUNDS after a warm-up. */
function nsPerStep(fn: () => void): number {
  for (let i = 0; i < Math.min(STEPS, 10_000); i++) fn();
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < STEPS; i++) fn();
    samples.push(Number(process.hrtime.bigint() - t0) / STEPS);
  }
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
}

let sink = 0;

// Today: the stats inside the step; the frontend validates the step and reads the numbers.
const inline = step(STATS);
const ours = nsPerStep(() => {
  const got = v8.deserialize(v8.serialize(inline)) as unknown;
  const decoded = decodeFromGenWorkerMessage(got);
  if (decoded.ok && decoded.msg.type === 'tsserve.gen.step' && decoded.msg.stats !== undefined)
    for (const f of FIELDS) sink += decoded.msg.stats[f] as number;
});

// The one flush contract: the step without stats, and a metrics message of the same values.
const bare = step(undefined);
let pending: MetricsMessage | null = null;
const flusher = new MetricsFlusher(
  1024,
  () => 0,
  (m) => {
    pending = m;
  },
  new DropLedger(() => undefined),
  () => undefined,
);
const ids = FIELDS.map((f) => flusher.newSeries(`engine_${f}`, ['m', '0']));
flusher.flush(); // the declarations once, as a worker's first flush carries them
const baseline = nsPerStep(() => {
  for (let i = 0; i < FIELDS.length; i++) flusher.buffer.push(ids[i]!, STATS[FIELDS[i]!] as number);
  flusher.flush();
  const got = v8.deserialize(v8.serialize(bare)) as unknown;
  decodeFromGenWorkerMessage(got);
  const m = v8.deserialize(v8.serialize(pending)) as unknown;
  const decoded = decodeMetricsMessage(m);
  if (!('error' in decoded)) for (let i = 0; i < decoded.values.length; i++) sink += decoded.values[i]!;
});

const round = (x: number): number => Math.round(x * 10) / 10;
process.stdout.write(
  JSON.stringify({
    bench: 'engine_stats_in_step_vs_metrics_message',
    ours: round(ours),
    baseline: round(baseline),
    unit: 'ns/step',
    ratio: Math.round((ours / baseline) * 1000) / 1000,
    better: 'lower',
    steps: STEPS,
    smoke: SMOKE,
    checksum: sink > 0,
  }) + '\n',
);
