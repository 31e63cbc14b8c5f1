import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineCore } from '../../../backend/engine/engine-core.js';
import type { HfRunner } from '../../../backend/engine/hf-runner.js';
import { loadEngine, readModelDir } from '../../../backend/engine/load.js';
import type { EngineCoreOutputs } from '../../../schema/engine-ipc.js';
import { collect } from './harness.js';
import { writeModels } from './real-harness.js';

const greedy = { temperature: 0, ignore_eos: true };
const PROMPTS = [
  'Hello',
  'The quick brown fox jumps over the lazy dog.',
  'a',
  'Once upon a time, in a land far away, there lived a tiny model that',
  'zz',
  'Once upon a time, in a land far away, there lived a tiny model that sang',
  'Batching changes nothing',
  '0123456789abcdef',
];

describe('HfRunner (usual exported layout)', function () {
  let root: string;
  let dir: string;
  const engines: EngineCore[] = [];

  async function engine(overrides: Record<string, unknown>): Promise<EngineCore> {
    const m = await readModelDir(dir);
    const e = await loadEngine({ dir, modelFile: m.modelFile, engine: m.engine, overrides });
    engines.push(e);
    return e;
  }

  /** Runs every prompt (max_tokens 6 + 5i, so the batch changes as sequences finish); returns tokens and the largest batch seen. */
  async function tokensOf(e: EngineCore): Promise<{ tokens: number[][]; widest: number }> {
    PROMPTS.forEach((p, i) => e.addRequest(`r${i}`, p, { ...greedy, max_tokens: 6 + 5 * i }));
    const steps: EngineCoreOutputs[] = [];
    let widest = 0;
    while (e.hasWork()) {
      steps.push(await e.step());
      widest = Math.max(widest, (e.runner as HfRunner).batchRows);
    }
    const res = collect(steps);
    return { tokens: PROMPTS.map((_, i) => res.get(`r${i}/0`)!.tokens), widest };
  }

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'tsserve-hf-'));
    dir = (await writeModels(root)).hf;
  });

  after(async () => {
    for (const e of engines) await e.runner.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('should give batched decodes exactly the greedy tokens of one-at-a-time runs', async () => {
    const alone = await tokensOf(await engine({ maxNumSeqs: 1, enablePrefixCaching: false }));
    const batched = await tokensOf(await engine({ maxNumSeqs: 32, enablePrefixCaching: false }));
    expect(alone.widest).to.equal(1);
    expect(batched.widest).to.equal(PROMPTS.length);
    expect(batched.tokens).to.deep.equal(alone.tokens);
    expect(batched.tokens.map((t) => t.length)).to.deep.equal(PROMPTS.map((_, i) => 6 + 5 * i));
  });

  it('should keep the tokens with prefix hits, chunked prefill and a small pool', async () => {
    const alone = await tokensOf(await engine({ maxNumSeqs: 1, enablePrefixCaching: false }));
    const mixed = await tokensOf(
      await engine({
        maxNumSeqs: 32,
        enablePrefixCaching: true,
        enableChunkedPrefill: true,
        prefillChunkSize: 16,
        maxNumBatchedTokens: 24,
        numBlocks: 12,
      }),
    );
    expect(mixed.tokens).to.deep.equal(alone.tokens);
  });

  it('should write the full blocks of batched rows to the store so a later prefix hit reads them', async () => {
    const e = await engine({ maxNumSeqs: 32, enablePrefixCaching: true });
    // Two sequences decode together; a third repeats one's prompt + output. With 17 prompt
    // tokens and 48 outputs, positions 0..63 are computed and the last block (48..63) fills in
    // the batch's last decode step, just before its rows are released: the hit reads it.
    e.addRequest('a', 'Block writer one', { ...greedy, max_tokens: 48 });
    e.addRequest('b', 'x', { ...greedy, max_tokens: 48 });
    const first: EngineCoreOutputs[] = [];
    while (e.hasWork()) first.push(await e.step());
    const a = collect(first).get('a/0')!.tokens;
    const prompt = [256, ...Buffer.from('Block writer one'), ...a];
    e.addRequest('c', prompt, { ...greedy, max_tokens: 5 });
    const second: EngineCoreOutputs[] = [];
    while (e.hasWork()) second.push(await e.step());
    const ref = await engine({ maxNumSeqs: 1, enablePrefixCaching: false });
    ref.addRequest('c', prompt, { ...greedy, max_tokens: 5 });
    const third: EngineCoreOutputs[] = [];
    while (ref.hasWork()) third.push(await ref.step());
    expect(collect(second).get('c/0')!.prefill!.numCachedTokens).to.equal(64);
    expect(collect(second).get('c/0')!.tokens).to.deep.equal(collect(third).get('c/0')!.tokens);
  });

  it('should keep the tokens of the others when a sequence is aborted mid-batch', async () => {
    const alone = await tokensOf(await engine({ maxNumSeqs: 1, enablePrefixCaching: false }));
    const e = await engine({ maxNumSeqs: 32, enablePrefixCaching: true });
    PROMPTS.forEach((p, i) => e.addRequest(`r${i}`, p, { ...greedy, max_tokens: 6 + 5 * i }));
    e.addRequest('gone', 'aborted while deferred', { ...greedy, max_tokens: 30 });
    const steps: EngineCoreOutputs[] = [];
    while (e.hasWork()) {
      steps.push(await e.step());
      if (steps.length === 4) e.abort('gone');
    }
    const res = collect(steps);
    expect(res.get('gone/0')!.finishReason).to.equal('abort');
    expect(PROMPTS.map((_, i) => res.get(`r${i}/0`)!.tokens)).to.deep.equal(alone.tokens);
    // Every row released: a new request still gets the tokens it gets alone.
    e.addRequest('after', PROMPTS[3]!, { ...greedy, max_tokens: 6 });
    const after: EngineCoreOutputs[] = [];
    while (e.hasWork()) after.push(await e.step());
    expect(collect(after).get('after/0')!.tokens).to.deep.equal(alone.tokens[3]!.slice(0, 6));
  });
});
