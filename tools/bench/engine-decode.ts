/**
 * What the engine benchmarks share: deterministic prompts, and the decode loop whose
 * decode-only steps give tokens/s, step time and JS time per step.
 */
import { performance } from 'node:perf_hooks';
import type { EngineCore } from '../../backend/engine/engine-core.js';
import { BOS_ID } from '../models/tiny-lm-spec.js';

/** Deterministic printable prompts of `len` tokens (BOS + bytes), distinct per index. */
export function prompts(count: number, len: number, seed: number): number[][] {
  let s = seed >>> 0;
  return Array.from({ length: count }, () => {
    const p = [BOS_ID];
    while (p.length < len) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      p.push(32 + ((s >>> 24) % 95));
    }
    return p;
  });
}

export interface DecodeRun {
  tokS: number;
  stepMs: number;
  jsMs: number;
}

/**
 * Runs `ps` through the engine, `concurrent` at a time, `gen` greedy tokens each (ignore_eos);
 * the decode-only steps in which every one of the `concurrent` sequences sampled give the figures.
 */
export async function engineDecode(
  e: EngineCore,
  ps: readonly number[][],
  concurrent: number,
  gen: number,
): Promise<DecodeRun> {
  let tokens = 0;
  let ms = 0;
  let js = 0;
  let steps = 0;
  let next = 0;
  let id = 0;
  const params = { temperature: 0, ignore_eos: true, max_tokens: gen };
  while (next < ps.length || e.hasWork()) {
    while (next < ps.length && e.numRequests < concurrent) e.addRequest(`b${id++}`, ps[next++]!, params);
    e.runner.takeSessionMs();
    const t0 = performance.now();
    const out = await e.step();
    const dt = performance.now() - t0;
    const sess = e.runner.takeSessionMs();
    if (out.numPromptTokens === 0 && out.numGenerationTokens === concurrent) {
      tokens += out.numGenerationTokens;
      ms += dt;
      js += dt - sess;
      steps++;
    }
  }
  return { tokS: (tokens / ms) * 1000, stepMs: ms / steps, jsMs: js / steps };
}
