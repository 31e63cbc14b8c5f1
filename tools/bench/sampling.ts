/**
 * `npm run bench:sampling`: µs to sample one token from a vocabulary of 32000 logits (a real
 * model's size, e.g. Llama 2), ours (backend/engine/sampling.ts: partial selection, no sort of
 * the vocabulary) vs the sampler before issue 11 (every finite logit sorted per token, then
 * top-k / top-p over the sorted list), for three settings: plain temperature, top_p 0.9, and
 * top_k 50 with top_p 0.9. Rows are drawn once; each round copies a row (the sampler writes
 * bans into it) and samples with a fresh seed; rounds interleave ours and the baseline. Prints
 * one JSON line per setting (lower is better; `ratio` = ours / baseline).
 */
import { performance } from 'node:perf_hooks';
import { Prng, resolveSamplingParams, sampleToken } from '../../backend/engine/sampling.js';
import { fullSortSample } from './full-sort-sampler.js';
import { smoke } from './smoke.js';

const VOCAB = 32000;
const ROWS = 16;
const ROUNDS = Number(process.env.SAMPLING_BENCH_ROUNDS ?? smoke(400, 5));

/** Logit rows shaped like a trained model's: a few strong candidates over a long low tail. */
function rows(): Float32Array[] {
  const r = new Prng(7);
  return Array.from({ length: ROWS }, () =>
    Float32Array.from({ length: VOCAB }, () => {
      const u = r.next();
      return u > 0.999 ? 8 + 4 * r.next() : 6 * (r.next() + r.next() + r.next() - 1.5);
    }),
  );
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const data = rows();
const buf = new Float32Array(VOCAB);
let sink = 0;
for (const [name, raw] of [
  ['sample_32k_temperature', { temperature: 0.8 }],
  ['sample_32k_top_p', { temperature: 0.8, top_p: 0.9 }],
  ['sample_32k_top_k_top_p', { temperature: 0.8, top_k: 50, top_p: 0.9 }],
] as const) {
  const p = resolveSamplingParams(raw);
  const ours: number[] = [];
  const base: number[] = [];
  for (let i = -20; i < ROUNDS; i++) {
    const row = data[(i + 20) % ROWS]!;
    buf.set(row);
    let t = performance.now();
    sink += sampleToken(buf, p, new Prng(i), []);
    if (i >= 0) ours.push(performance.now() - t);
    buf.set(row);
    t = performance.now();
    sink += fullSortSample(buf, p.temperature, p.topK, p.topP, new Prng(i));
    if (i >= 0) base.push(performance.now() - t);
  }
  const o = median(ours) * 1000;
  const b = median(base) * 1000;
  process.stdout.write(
    `${JSON.stringify({ bench: name, ours: Number(o.toFixed(1)), baseline: Number(b.toFixed(1)), unit: 'µs', ratio: Number((o / b).toFixed(3)) })}\n`,
  );
}
if (sink < 0) process.stdout.write('\n');
