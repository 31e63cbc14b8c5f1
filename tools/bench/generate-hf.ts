/**
 * `npm run bench:generate-hf`: the engine on a user's export layout (`tiny-lm-hf`:
 * `past_key_values.N.*` → `present.N.*`, 1 thread). One JSON line, ours and baseline measured
 * in this run, alternating in rounds (medians reported):
 *
 * - hf_layout_32_vs_1: aggregate decode tokens/s of 32 concurrent sequences (one left-padded
 *   batch, its `present` fed back as the next past) vs the same prompts one at a time. Prompts
 *   of PROMPT tokens, GEN tokens each (greedy, ignore_eos), so contexts reach PROMPT + GEN.
 *   Counted: decode-only steps in which every running sequence samples. Goal ratio ≥ 3.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEngine, readModelDir } from '../../backend/engine/load.js';
import { TINY_LM_HF_MODEL } from '../../tools/models/demo-models.js';
import { engineDecode, prompts } from './engine-decode.js';

const BATCH = 32;
const PROMPT = Number(process.env.HF_BENCH_PROMPT ?? 32);
const GEN = Number(process.env.HF_BENCH_GEN ?? 64);
const SINGLE = 4; // prompts run one at a time per round (tokens/s does not depend on how many)
const ROUNDS = 3;

function line(bench: string, ours: number, baseline: number, unit: string, extra: Record<string, number>): void {
  const r = (x: number): number => Math.round(x * 1000) / 1000;
  process.stdout.write(JSON.stringify({ bench, ours: r(ours), baseline: r(baseline), unit, ratio: r(ours / baseline), ...extra }) + '\n');
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'tsserve-bench-hf-'));
  try {
    const dir = join(root, 'tiny-lm-hf');
    mkdirSync(dir, { recursive: true });
    await TINY_LM_HF_MODEL.write(dir);
    const m = readModelDir(dir);
    const e = await loadEngine({ dir, modelFile: m.modelFile, engine: m.engine, overrides: { numBlocks: 1024, threads: 1, enablePrefixCaching: false } });
    const ps = prompts(BATCH, PROMPT, 11);
    await engineDecode(e, ps.slice(0, 4), 4, GEN); // warm-up
    const batched: number[] = [];
    const single: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      batched.push((await engineDecode(e, ps, BATCH, GEN)).tokS);
      single.push((await engineDecode(e, ps.slice(0, SINGLE), 1, GEN)).tokS);
    }
    await e.runner.close();
    const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    line('hf_layout_32_vs_1', med(batched), med(single), 'tok/s', { prompt_tokens: PROMPT, gen_tokens: GEN });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:generate-hf failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
