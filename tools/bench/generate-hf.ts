/**
 * `npm run bench:generate-hf`: the engine on a user's export layout (`tiny-lm-hf`:
 * `past_key_values.N.*` → `present.N.*`, 1 thread). One JSON line, ours and baseline measured
 * in this run, alternating in rounds (medians reported):
 *
 * - hf_layout_32_vs_1: aggregate decode tokens/s of 32 concurrent sequences (one left-padded
 *   batch, its `present` fed back as the next past) vs the same prompts one at a time. Prompts
 *   of PROMPT tokens, GEN tokens each (greedy, ignore_eos), so contexts reach PROMPT + GEN.
 *   Counted: decode-only steps in which every running sequence samples. Goal ratio ≥ 3.
 * - hf_layout_32_vs_1_static: the same layout without the engine, a user's lockstep loop feeding
 *   `present` back each step, batch 32 vs batch 1 (how the graph itself scales). No goal.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEngine, readModelDir } from '../../backend/engine/load.js';
import { TINY_LM_BYTE_HF_MODEL } from '../models/demo-models.js';
import { engineDecode, prompts } from './engine-decode.js';
import { createSession, tensorF32, tensorI64 } from '../../backend/onnx/ort.js';
import type { OrtTensorInput } from '../../backend/onnx/ort.js';
import { HEAD_DIM, NUM_HEADS, NUM_LAYERS } from '../models/tiny-lm-spec.js';
import { smoke } from './smoke.js';
import { performance } from 'node:perf_hooks';

const BATCH = 32;
const PROMPT = Number(process.env.HF_BENCH_PROMPT ?? 32);
const GEN = Number(process.env.HF_BENCH_GEN ?? smoke(64, 8));
const SINGLE = 4; // prompts run one at a time per round (tokens/s does not depend on how many)
const ROUNDS = smoke(3, 1);

function line(bench: string, ours: number, baseline: number, unit: string, extra: Record<string, number>): void {
  const r = (x: number): number => Math.round(x * 1000) / 1000;
  process.stdout.write(
    JSON.stringify({ bench, ours: r(ours), baseline: r(baseline), unit, ratio: r(ours / baseline), ...extra }) + '\n',
  );
}

/**
 * The loop a user writes for this layout, no engine: `B` rows decode in lockstep from a past of
 * PROMPT positions for GEN steps, each step's `present` fed back as the next past (the graph
 * concatenates it, the binding copies it out). Its batch-32 vs batch-1 ratio is how the layout
 * itself scales: the reference for hf_layout_32_vs_1. Tokens/s of the decode steps.
 */
async function staticLoop(file: string, B: number): Promise<number> {
  const s = await createSession(file, { threads: 1 });
  const H = NUM_HEADS;
  const Dh = HEAD_DIM;
  let past: Record<string, OrtTensorInput> = {};
  for (let l = 0; l < NUM_LAYERS; l++) {
    past[`past_key_values.${l}.key`] = tensorF32(new Float32Array(B * H * PROMPT * Dh).fill(0.01), [B, H, PROMPT, Dh]);
    past[`past_key_values.${l}.value`] = tensorF32(new Float32Array(B * H * PROMPT * Dh).fill(0.01), [
      B,
      H,
      PROMPT,
      Dh,
    ]);
  }
  const ids = new BigInt64Array(B).fill(65n);
  const t0 = performance.now();
  for (let step = 0; step < GEN; step++) {
    const P = PROMPT + step;
    const r = await s.run({
      input_ids: tensorI64(ids, [B, 1]),
      position_ids: tensorI64(new BigInt64Array(B).fill(BigInt(P)), [B, 1]),
      attention_mask: tensorI64(new BigInt64Array(B * (P + 1)).fill(1n), [B, P + 1]),
      ...past,
    });
    past = {};
    for (let l = 0; l < NUM_LAYERS; l++) {
      past[`past_key_values.${l}.key`] = r[`present.${l}.key`] as OrtTensorInput;
      past[`past_key_values.${l}.value`] = r[`present.${l}.value`] as OrtTensorInput;
    }
  }
  const ms = performance.now() - t0;
  await s.release();
  return ((B * GEN) / ms) * 1000;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'tsserve-bench-hf-'));
  try {
    const dir = join(root, 'tiny-lm-hf');
    mkdirSync(dir, { recursive: true });
    await TINY_LM_BYTE_HF_MODEL.write(dir);
    const m = await readModelDir(dir);
    const e = await loadEngine({
      dir,
      modelFile: m.modelFile,
      engine: m.engine,
      overrides: { numBlocks: 1024, threads: 1, enablePrefixCaching: false },
    });
    const ps = prompts(BATCH, PROMPT, 11);
    await engineDecode(e, ps.slice(0, 4), 4, GEN); // warm-up
    const batched: number[] = [];
    const single: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      batched.push((await engineDecode(e, ps, BATCH, GEN)).tokS);
      single.push((await engineDecode(e, ps.slice(0, SINGLE), 1, GEN)).tokS);
    }
    await e.runner.close();
    const file = join(dir, m.modelFile);
    const static32: number[] = [];
    const static1: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      static32.push(await staticLoop(file, BATCH));
      static1.push(await staticLoop(file, 1));
    }
    const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    line('hf_layout_32_vs_1', med(batched), med(single), 'tok/s', { prompt_tokens: PROMPT, gen_tokens: GEN });
    line('hf_layout_32_vs_1_static', med(static32), med(static1), 'tok/s', { prompt_tokens: PROMPT, gen_tokens: GEN });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:generate-hf failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
