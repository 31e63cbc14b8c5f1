/**
 * `npm run bench:generate-hf` (after generate-hf.js): a user's Hugging Face export served as it
 * is. The bench writes a Llama-style export (d=512, 4 layers, 8 heads / 4 K/V heads, GPT-2's
 * 50,257-token vocabulary and tokenizer.json, ~250 MB, no model-config.yaml), serves it with a
 * real `tsserve start` (one engine, 1 onnxruntime thread), and sends 32 concurrent greedy
 * `/v1/completions` (32-token prompts as token ids, 64 tokens each, ignore_eos). One JSON line:
 *
 * - hf_export_32_vs_static: generated tokens/s of those 32 requests (wall time from the first
 *   request sent to the last answer, prefill, HTTP and IPC included) vs the loop a user writes
 *   over the same graph with onnxruntime-node in this process (tools/models/hf-greedy.ts: one
 *   static batch of the same 32 prompts, prefilled in one run, then 64 runs, 1 thread), prefill
 *   included too. Goal ratio ≥ 0.8. Rounds alternate (server idle while the loop runs); medians.
 *   Also printed: the loop's decode-only tok/s and the load average.
 *
 * BENCH_SMOKE=1: a small export (d=64, 2 layers, the byte tokenizer), 4 tokens, one round.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createSession } from '../../backend/onnx/ort.js';
import { writeHfDir } from '../models/hf-dir.js';
import { greedyLoop } from '../models/hf-greedy.js';
import { Prng } from '../models/prng.js';
import { SMOKE } from './smoke.js';
import { spawnServer } from './spawn-server.js';

const BATCH = 32;
const PROMPT = 32;
const GEN = SMOKE ? 4 : 64;
const ROUNDS = SMOKE ? 1 : 3;
const MODEL = 'llama-export';

/** 32 distinct prompts of PROMPT ids each, drawn from the vocabulary's first 20,000 ids (seeded). */
function prompts(vocab: number): number[][] {
  const rng = new Prng(99);
  const top = Math.min(vocab - 1, 20000);
  return Array.from({ length: BATCH }, () => Array.from({ length: PROMPT }, () => 1 + Math.floor(rng.uniform() * top)));
}

/** One greedy completion; resolves to its completion tokens. */
async function complete(base: string, prompt: readonly number[]): Promise<number> {
  const res = await fetch(`${base}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, prompt, max_tokens: GEN, temperature: 0, ignore_eos: true }),
  });
  const body = (await res.json()) as { usage?: { completion_tokens: number } };
  if (!res.ok || body.usage === undefined) throw new Error(`HTTP ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body.usage.completion_tokens;
}

/** Tokens/s of the 32 prompts at once through the server. */
async function served(base: string, ps: readonly (readonly number[])[]): Promise<number> {
  const t0 = performance.now();
  const tokens = await Promise.all(ps.map((p) => complete(base, p)));
  const ms = performance.now() - t0;
  const total = tokens.reduce((a, b) => a + b, 0);
  if (total !== BATCH * GEN) throw new Error(`expected ${BATCH * GEN} tokens, got ${total}`);
  return (total / ms) * 1000;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'tsserve-bench-hfx-'));
  let proc: ChildProcess | null = null;
  try {
    const store = join(root, 'store');
    mkdirSync(join(root, 'logs'), { recursive: true });
    const spec = SMOKE
      ? { tokenizer: 'bytes' as const }
      : {
          tokenizer: 'gpt2' as const,
          hiddenSize: 512,
          numLayers: 4,
          numHeads: 8,
          numKvHeads: 4,
          intermediateSize: 1408,
          maxPositions: 1024,
        };
    const { spec: written, onnxFile } = writeHfDir(join(store, MODEL), spec);
    const ps = prompts(written.vocabSize);
    const s = await spawnServer(
      ['--model-store', store, '--models', `${MODEL}=${MODEL}`, '--log-dir', join(root, 'logs')],
      root,
    );
    proc = s.proc;
    const session = await createSession(onnxFile, { threads: 1 });
    // Warm-up: one full batch each way (JIT, the engine's buffers, onnxruntime's arenas).
    await served(s.inference, ps);
    await greedyLoop(session, written.numLayers, ps, GEN);
    const ours: number[] = [];
    const base: number[] = [];
    const decodeOnly: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      ours.push(await served(s.inference, ps));
      const g = await greedyLoop(session, written.numLayers, ps, GEN);
      base.push(((BATCH * GEN) / g.ms) * 1000);
      decodeOnly.push(((BATCH * (GEN - 1)) / g.decodeMs) * 1000);
    }
    await session.release();
    const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const r3 = (x: number): number => Math.round(x * 1000) / 1000;
    process.stdout.write(
      JSON.stringify({
        bench: 'hf_export_32_vs_static',
        ours: r3(med(ours)),
        baseline: r3(med(base)),
        unit: 'tok/s',
        ratio: r3(med(ours) / med(base)),
        static_decode_only_tok_s: r3(med(decodeOnly)),
        rounds: ROUNDS,
        load_1m: r3(loadavg()[0]!),
      }) + '\n',
    );
  } finally {
    if (proc?.pid !== undefined) {
      try {
        process.kill(-proc.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(
    `bench hf_export_32_vs_static failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
  );
  process.exit(1);
});
