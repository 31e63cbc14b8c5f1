import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineCore } from '../../../backend/engine/engine-core.js';
import type { HfRunner } from '../../../backend/engine/hf-runner.js';
import { loadEngine } from '../../../backend/engine/load.js';
import { readHfBase } from '../../../frontend/store/hf-model-dir.js';
import type { EngineCoreOutputs } from '../../../schema/engine-ipc.js';
import { writeHfDir } from '../../../tools/models/hf-dir.js';
import type { HfDirOptions } from '../../../tools/models/hf-dir.js';
import { greedyFile } from '../../../tools/models/hf-greedy.js';
import { collect } from './harness.js';

/** Prompts of different lengths (token ids of the byte tokenizer), and their output lengths. */
const PROMPTS = [
  [72, 105],
  [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
  [200],
  [9, 8, 7, 6, 5],
];
const MAX = [12, 20, 7, 16];

/** The exports under test: each a Hugging Face directory with no model-config.yaml. */
const VARIANTS: readonly { readonly name: string; readonly opts: HfDirOptions }[] = [
  { name: 'GQA (4 heads, 2 K/V heads) with position_ids, onnx/model.onnx', opts: {} },
  { name: 'without position_ids (positions from the mask)', opts: { positionIds: false, onnxFile: 'model.onnx' } },
  { name: "Optimum's merged decoder (use_cache_branch)", opts: { merged: true } },
  { name: 'float16 K/V and logits', opts: { dtype: 'float16' } },
];

describe('HfRunner on Hugging Face exports (served with no model-config.yaml)', function () {
  let root: string;
  const engines: EngineCore[] = [];

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'tsserve-hfx-'));
  });

  after(async () => {
    for (const e of engines) await e.runner.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** The engine the server would start for `dir`: its settings from the directory's files alone. */
  async function engineOf(dir: string, overrides: Record<string, unknown>): Promise<EngineCore> {
    const hf = await readHfBase(root, dir);
    if (!hf.ok) throw new Error(hf.problems.join('\n'));
    const e = await loadEngine({ dir, modelFile: hf.base.modelFile, engine: hf.base.engine, overrides });
    engines.push(e);
    return e;
  }

  /** Every prompt at once through the engine (greedy, ignore_eos); the tokens and the widest batch. */
  async function tokensOf(e: EngineCore): Promise<{ tokens: number[][]; widest: number }> {
    PROMPTS.forEach((p, i) => e.addRequest(`r${i}`, p, { temperature: 0, ignore_eos: true, max_tokens: MAX[i]! }));
    const steps: EngineCoreOutputs[] = [];
    let widest = 0;
    while (e.hasWork()) {
      steps.push(await e.step());
      widest = Math.max(widest, (e.runner as HfRunner).batchRows);
    }
    const res = collect(steps);
    return { tokens: PROMPTS.map((_, i) => res.get(`r${i}/0`)!.tokens), widest };
  }

  for (const [v, variant] of VARIANTS.entries()) {
    describe(variant.name, function () {
      let dir: string;
      let onnxFile: string;
      let direct: number[][];

      before(async () => {
        dir = join(root, `export-${v}`);
        ({ onnxFile } = writeHfDir(dir, variant.opts));
        direct = [];
        for (const [i, p] of PROMPTS.entries()) direct.push((await greedyFile(onnxFile, 2, [p], MAX[i]!)).tokens[0]!);
      });

      it('should give one-at-a-time greedy tokens identical to a direct onnxruntime greedy loop over the graph', async () => {
        const alone = await tokensOf(await engineOf(dir, { maxNumSeqs: 1, enablePrefixCaching: false }));
        expect(alone.widest).to.equal(1);
        expect(alone.tokens).to.deep.equal(direct);
      });

      it('should give the batched engine exactly the one-at-a-time tokens', async () => {
        const batched = await tokensOf(await engineOf(dir, { maxNumSeqs: 32, enablePrefixCaching: false }));
        expect(batched.widest).to.equal(PROMPTS.length);
        expect(batched.tokens).to.deep.equal(direct);
        expect(batched.tokens.map((t) => t.length)).to.deep.equal(MAX);
      });
    });
  }

  it('should keep the direct loop tokens with prefix hits, chunked prefill and a small block pool', async () => {
    const dir = join(root, 'export-prefix');
    const { onnxFile } = writeHfDir(dir, {});
    const e = await engineOf(dir, {
      maxNumSeqs: 32,
      enablePrefixCaching: true,
      prefillChunkSize: 8,
      maxNumBatchedTokens: 12,
      numBlocks: 16,
      blockSize: 4,
    });
    // The second request repeats the first's prompt: its first blocks are a prefix hit.
    const prompt = PROMPTS[1]!;
    e.addRequest('a', prompt, { temperature: 0, ignore_eos: true, max_tokens: 10 });
    const first: EngineCoreOutputs[] = [];
    while (e.hasWork()) first.push(await e.step());
    e.addRequest('b', prompt, { temperature: 0, ignore_eos: true, max_tokens: 10 });
    const second: EngineCoreOutputs[] = [];
    while (e.hasWork()) second.push(await e.step());
    const ref = (await greedyFile(onnxFile, 2, [prompt], 10)).tokens[0]!;
    expect(collect(first).get('a/0')!.tokens).to.deep.equal(ref);
    expect(collect(second).get('b/0')!.prefill!.numCachedTokens).to.equal(16);
    expect(collect(second).get('b/0')!.tokens).to.deep.equal(ref);
  });
});
