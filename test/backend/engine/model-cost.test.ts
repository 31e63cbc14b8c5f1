/**
 * vLLM's MFU counters (`--enable-mfu-metrics`) on the real tiny LM: after a known generation the
 * engine's summed estimate equals the formula worked out here from the tiny LM's shapes
 * (tools/models/tiny-lm-spec.ts), step by step: one prefill of the P prompt tokens, then N − 1
 * decode steps of one token each, one logits row per step. Without the setting no estimate is sent.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineCore } from '../../../backend/engine/engine-core.js';
import { loadEngine, readModelDir } from '../../../backend/engine/load.js';
import type { EngineCoreOutputs } from '../../../schema/engine-ipc.js';
import { D_MODEL, FFN_DIM, HEAD_DIM, NUM_HEADS, NUM_LAYERS, VOCAB_SIZE } from '../../../tools/models/tiny-lm-spec.js';
import { drain } from './harness.js';
import { promptIds, writeModels } from './real-harness.js';

const greedy = { temperature: 0, ignore_eos: true };

function summed(steps: readonly EngineCoreOutputs[]): { flops: number; readBytes: number; writeBytes: number } {
  const t = { flops: 0, readBytes: 0, writeBytes: 0 };
  for (const s of steps) {
    const p = s.stats?.perf;
    if (p === undefined) continue;
    t.flops += p.flops;
    t.readBytes += p.readBytes;
    t.writeBytes += p.writeBytes;
  }
  return t;
}

describe('MFU estimate (enableMfuMetrics) on the real tiny LM', function () {
  let root: string;
  let dir: string;
  const engines: EngineCore[] = [];

  async function engine(overrides: Record<string, unknown>): Promise<EngineCore> {
    const m = await readModelDir(dir);
    const e = await loadEngine({ dir, modelFile: m.modelFile, engine: m.engine, overrides });
    engines.push(e);
    return e;
  }

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'tsserve-mfu-'));
    dir = (await writeModels(root)).fast;
  });

  after(async () => {
    for (const e of engines) await e.runner.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("should sum to 2·params·tokens + attention FLOPs, weights + past K/V read, new K/V + logits written, from the model's shapes", async () => {
    const e = await engine({ enableMfuMetrics: true, enablePrefixCaching: false });
    const prompt = promptIds('Hello, tiny world');
    const P = prompt.length;
    const N = 6;
    e.addRequest('a', prompt, { ...greedy, max_tokens: N });
    const got = summed(await drain(e));

    // The tiny LM's weights, counted from its graph's initializers (tools/models/tiny-lm.ts).
    const d = D_MODEL;
    const f = FFN_DIM;
    const qkv = d * 3 * d + 3 * d;
    const out = d * d + d;
    const mlp = d * f + f + f * d + d;
    const norms = 2 * (d + d);
    const layer = qkv + out + mlp + norms;
    const head = d * VOCAB_SIZE + VOCAB_SIZE;
    const kvPerPos = 2 * NUM_LAYERS * NUM_HEADS * HEAD_DIM * 4;
    const attnPerPos = 2 * 2 * NUM_LAYERS * NUM_HEADS * HEAD_DIM; // QKᵀ and probs·V, multiply-adds
    // Steps: the prefill (positions 0..P−1, each attending to itself and what precedes it), then
    // decode i = 1..N−1 computing position P+i−1 after P+i−1 cached ones.
    let flops = 2 * NUM_LAYERS * layer * P + 2 * head + attnPerPos * ((P * (P + 1)) / 2);
    let read = 4 * (NUM_LAYERS * layer + head);
    let write = kvPerPos * P + 4 * VOCAB_SIZE;
    for (let i = 1; i < N; i++) {
      const past = P + i - 1;
      flops += 2 * NUM_LAYERS * layer + 2 * head + attnPerPos * (past + 1);
      read += 4 * (NUM_LAYERS * layer + head) + kvPerPos * past;
      write += kvPerPos + 4 * VOCAB_SIZE;
    }
    expect(got).to.deep.equal({ flops, readBytes: read, writeBytes: write });
    // The figures for this prompt (P = 18, N = 6), so a change of formula shows as a number.
    expect([P, got.flops, got.readBytes, got.writeBytes]).to.deep.equal([18, 147_245_092, 78_233_672, 194_632]);
  });

  it('should count two sequences of one step once for the weights and each for its own K/V', async () => {
    const e = await engine({ enableMfuMetrics: true, enablePrefixCaching: false });
    e.addRequest('a', promptIds('ab'), { ...greedy, max_tokens: 1 });
    e.addRequest('b', promptIds('cde'), { ...greedy, max_tokens: 1 });
    const steps = await drain(e);
    // Both prompts prefill in one step and finish there (max_tokens 1).
    expect(steps.filter((s) => s.stats?.perf !== undefined).length).to.equal(1);
    const kvPerPos = 2 * NUM_LAYERS * NUM_HEADS * HEAD_DIM * 4;
    const weights =
      4 *
      (NUM_LAYERS *
        (3 * D_MODEL * D_MODEL + 3 * D_MODEL + D_MODEL * D_MODEL + 2 * FFN_DIM * D_MODEL + FFN_DIM + 6 * D_MODEL) +
        D_MODEL * VOCAB_SIZE +
        VOCAB_SIZE);
    const got = summed(steps);
    expect([got.readBytes, got.writeBytes]).to.deep.equal([weights, kvPerPos * (3 + 4) + 2 * 4 * VOCAB_SIZE]);
  });

  it('should send no estimate without enableMfuMetrics', async () => {
    const e = await engine({ enablePrefixCaching: false });
    e.addRequest('a', promptIds('Hello'), { ...greedy, max_tokens: 3 });
    const steps = await drain(e);
    expect(steps.some((s) => s.stats !== undefined)).to.equal(true);
    expect(steps.filter((s) => s.stats?.perf !== undefined).length).to.equal(0);
  });
});
