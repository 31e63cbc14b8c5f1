/**
 * `npm run bench:roofline` — the engine's decode tokens/s against what the memory system allows,
 * computed in the same run, and the 32-vs-1 ratios where batching can pay. The engine runs as a
 * worker would: with `glibc.malloc.hugetlb=1` (the process re-runs itself with the worker's
 * environment, frontend/workers/worker-env.ts). Lines:
 *
 * - `read_gb_s_weights_size` / `read_gb_s_ram`: read bandwidth (GB/s) measured here with
 *   `Buffer.compare` of two equal buffers (glibc's vectorised memcmp reads both whole), once on
 *   buffers of the tiny LM's weight bytes in all (they stay in cache, the best case for the
 *   weights) and once on 2 × 256 MiB (RAM); best of several passes. Baseline: the other one.
 * - `decode_tok_s_32_engine_vs_roofline`: the engine's decode tokens/s, 32 sequences of the tiny
 *   LM at contexts 192–256 (bench:generate's shape), vs the roofline of that step: the weights'
 *   bytes (from the model's shapes) at the weights-size read bandwidth plus the K/V the step must
 *   read (2 × layers × heads × headDim × 4 bytes × the mean context × 32 rows) at the RAM
 *   bandwidth. A memory roofline: the batch-32 step also does 32 rows of matrix products, which
 *   it does not count. Goal ≥ 0.8.
 * - `decode_tok_s_32_vs_1_engine_ctx64`: tiny LM, 32 concurrent vs one at a time, contexts up to
 *   64 (32-token prompts, 32 new tokens). Goal ≥ 4.
 * - `decode_tok_s_32_vs_1_engine_d512`: the same on the d_model 512 variant (tools/bench/wide-lm.ts,
 *   about 50 MB of weights). Goal ≥ 5. `decode_tok_s_32_engine_vs_roofline_d512` beside it.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadEngine, readModelDir } from '../../backend/engine/load.js';
import type { EngineCore } from '../../backend/engine/engine-core.js';
import { kvBytesPerToken } from '../../backend/engine/model-cost.js';
import { workerEnv } from '../../frontend/workers/worker-env.js';
import { TINY_LM_MODEL } from '../models/demo-models.js';
import { D_MODEL, FFN_DIM, HEAD_DIM, NUM_HEADS, NUM_LAYERS } from '../models/tiny-lm-spec.js';
import { engineDecode, prompts } from './engine-decode.js';
import { smoke } from './smoke.js';
import { WIDE_LM, weightBytes, writeWideLm } from './wide-lm.js';

const ROUNDS = smoke(3, 1);
const RAM_BYTES = smoke(256, 32) * 1024 * 1024;

function line(bench: string, ours: number, baseline: number, unit: string, extra: Record<string, unknown> = {}): void {
  const r = (x: number): number => Math.round(x * 1000) / 1000;
  process.stdout.write(
    JSON.stringify({ bench, ours: r(ours), baseline: r(baseline), unit, ratio: r(ours / baseline), ...extra }) + '\n',
  );
}

/** Best read bandwidth (GB/s) over `passes` memcmp passes of two equal buffers of `bytes` in all. */
function readGbS(bytes: number, passes: number): number {
  const a = Buffer.alloc(bytes / 2, 7);
  const b = Buffer.alloc(bytes / 2, 7);
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < passes; i++) {
    const t0 = performance.now();
    if (Buffer.compare(a, b) !== 0) throw new Error('buffers differ');
    best = Math.min(best, performance.now() - t0);
  }
  return bytes / (best / 1000) / 1e9;
}

/** Median decode tokens/s over ROUNDS of 32 concurrent and of one at a time, and the mean context. */
async function decode(
  e: EngineCore,
  prompt: number,
  gen: number,
  seed: number,
): Promise<{ b32: number; b1: number; meanCtx: number }> {
  const ps = prompts(32, prompt, seed);
  await engineDecode(e, ps.slice(0, 4), 4, gen); // warm-up
  const b32: number[] = [];
  const b1: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    b32.push((await engineDecode(e, ps, 32, gen)).tokS);
    b1.push((await engineDecode(e, ps.slice(r, r + 2), 1, gen)).tokS);
  }
  const med = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  return { b32: med(b32), b1: med(b1), meanCtx: prompt + gen / 2 };
}

async function engineOf(dir: string): Promise<EngineCore> {
  const m = await readModelDir(dir);
  return loadEngine({
    dir,
    modelFile: m.modelFile,
    engine: m.engine,
    overrides: { numBlocks: 1024, threads: 1, enablePrefixCaching: false },
  });
}

/** tok/s the memory roofline allows a batch-`rows` decode step at `meanCtx` positions. */
function roofline(
  wBytes: number,
  dims: { layers: number; heads: number; headDim: number },
  rows: number,
  meanCtx: number,
  weightGbS: number,
  ramGbS: number,
): { tokS: number; kvBytes: number } {
  const kvBytes =
    kvBytesPerToken({ numLayers: dims.layers, numHeads: dims.heads, headDim: dims.headDim }) * meanCtx * rows;
  const s = wBytes / (weightGbS * 1e9) + kvBytes / (ramGbS * 1e9);
  return { tokS: rows / s, kvBytes };
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'tsserve-bench-roofline-'));
  try {
    const tinyW = weightBytes(D_MODEL, FFN_DIM, NUM_LAYERS);
    const wideW = weightBytes(WIDE_LM.dModel, WIDE_LM.ffnDim, WIDE_LM.numLayers);
    const cacheGbS = readGbS(tinyW - (tinyW % 2), smoke(40, 3));
    const ramGbS = readGbS(RAM_BYTES, smoke(8, 1));
    const wideGbS = readGbS(wideW - (wideW % 2), smoke(20, 2));
    line('read_gb_s_weights_size', cacheGbS, ramGbS, 'GB/s', { bytes: tinyW });
    line('read_gb_s_ram', ramGbS, cacheGbS, 'GB/s', { bytes: RAM_BYTES });

    const tinyDir = join(root, 'tiny-lm');
    await TINY_LM_MODEL.write(tinyDir);
    const tiny = await engineOf(tinyDir);
    const long = await decode(tiny, 192, smoke(64, 24), 7);
    const short = await decode(tiny, 32, 32, 9);
    await tiny.runner.close();
    const tinyDims = { layers: NUM_LAYERS, heads: NUM_HEADS, headDim: HEAD_DIM };
    const roof = roofline(tinyW, tinyDims, 32, long.meanCtx, cacheGbS, ramGbS);
    line('decode_tok_s_32_engine_vs_roofline', long.b32, roof.tokS, 'tok/s', {
      weight_bytes: tinyW,
      kv_bytes_per_step: roof.kvBytes,
      mean_context: long.meanCtx,
    });
    line('decode_tok_s_32_vs_1_engine_ctx64', short.b32, short.b1, 'tok/s');

    const wideDir = join(root, 'wide-lm');
    writeWideLm(wideDir);
    const wide = await engineOf(wideDir);
    const w = await decode(wide, 32, 32, 11);
    await wide.runner.close();
    line('decode_tok_s_32_vs_1_engine_d512', w.b32, w.b1, 'tok/s');
    const wideDims = { layers: WIDE_LM.numLayers, heads: WIDE_LM.numHeads, headDim: WIDE_LM.headDim };
    const wideRoof = roofline(wideW, wideDims, 32, w.meanCtx, wideGbS, ramGbS);
    line('decode_tok_s_32_engine_vs_roofline_d512', w.b32, wideRoof.tokS, 'tok/s', {
      weight_bytes: wideW,
      weight_read_gb_s: Math.round(wideGbS * 10) / 10,
      kv_bytes_per_step: wideRoof.kvBytes,
      mean_context: w.meanCtx,
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

// Run as a worker runs: re-run in a child with the worker's environment unless already in one.
const env = workerEnv(process.env, 'bench-roofline');
if (process.argv[1] === import.meta.filename) {
  if (process.env.TS_WORKER_ID === undefined) {
    const c = fork(import.meta.filename, process.argv.slice(2), { env });
    c.once('exit', (code) => process.exit(code ?? 1));
  } else await main();
}
