import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineCore } from '../../../backend/engine/engine-core.js';
import { LLM } from '../../../backend/engine/llm.js';
import { loadEngine, readModelDir } from '../../../backend/engine/load.js';
import { createSession } from '../../../backend/onnx/ort.js';
import type { OrtSession } from '../../../backend/onnx/ort.js';
import { collect, drain, totals } from './harness.js';
import { promptIds, referenceGreedy, writeModels } from './real-harness.js';

const greedy = { temperature: 0, ignore_eos: true };
const PROMPTS = [
  'Hello',
  'The quick brown fox jumps over the lazy dog.',
  'a',
  'Once upon a time, in a land far away, there lived a tiny model that',
  'zz',
];

describe('EngineCore on the real tiny LM', function () {
  let root: string;
  let dirs: { fast: string; hf: string };
  let ref: OrtSession;
  const engines: EngineCore[] = [];
  const refs = new Map<string, number[]>();

  async function engine(dir: string, overrides: Record<string, unknown> = {}): Promise<EngineCore> {
    const m = await readModelDir(dir);
    const e = await loadEngine({ dir, modelFile: m.modelFile, engine: m.engine, overrides });
    engines.push(e);
    return e;
  }

  async function reference(text: string, n: number): Promise<number[]> {
    const k = `${text}\u0000${n}`;
    if (!refs.has(k)) refs.set(k, await referenceGreedy(ref, promptIds(text), n, true));
    return refs.get(k)!;
  }

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'tsserve-engine-'));
    dirs = await writeModels(root);
    ref = await createSession(join(dirs.fast, 'model.onnx'));
  });

  after(async () => {
    for (const e of engines) await e.runner.close();
    await ref?.release();
    rmSync(root, { recursive: true, force: true });
  });

  it('should generate the same greedy tokens as the no-cache reference loop', async () => {
    const e = await engine(dirs.fast);
    e.addRequest('a', PROMPTS[1]!, { ...greedy, max_tokens: 24 });
    const r = collect(await drain(e)).get('a/0')!;
    expect(r.tokens).to.deep.equal(await reference(PROMPTS[1]!, 24));
    expect(r.finishReason).to.equal('length');
  });

  it('should return, offline, greedy logprobs whose best alternative is each reference token, with its logprob', async () => {
    const llm = new LLM(await engine(dirs.fast));
    const [out] = await llm.generate([PROMPTS[1]!], { ...greedy, max_tokens: 12, logprobs: 3 });
    const s = out!.outputs[0]!;
    expect(s.tokenIds).to.deep.equal(await reference(PROMPTS[1]!, 12));
    expect(s.logprobs!.map((l) => l.id)).to.deep.equal(s.tokenIds);
    for (const l of s.logprobs!) {
      expect(l.top.length).to.equal(3);
      expect(l.top[0]).to.deep.equal({ id: l.id, logprob: l.logprob });
      expect(l.top[1]!.logprob).to.be.at.most(l.logprob);
    }
    const [plain] = await llm.generate([PROMPTS[1]!], { ...greedy, max_tokens: 2 });
    expect(plain!.outputs[0]!.logprobs).to.equal(undefined);
  });

  it('should give every sequence of a mixed-length batch the tokens it gets alone', async () => {
    const e = await engine(dirs.fast);
    PROMPTS.forEach((p, i) => e.addRequest(`r${i}`, p, { ...greedy, max_tokens: 8 + 3 * i }));
    const res = collect(await drain(e));
    for (let i = 0; i < PROMPTS.length; i++)
      expect(res.get(`r${i}/0`)!.tokens, PROMPTS[i]).to.deep.equal(await reference(PROMPTS[i]!, 8 + 3 * i));
  });

  it('should give the same tokens with chunked prefill', async () => {
    const e = await engine(dirs.fast, { enableChunkedPrefill: true, prefillChunkSize: 16, maxNumBatchedTokens: 32 });
    PROMPTS.forEach((p, i) => e.addRequest(`r${i}`, p, { ...greedy, max_tokens: 10 }));
    const steps = await drain(e);
    const res = collect(steps);
    for (let i = 0; i < PROMPTS.length; i++)
      expect(res.get(`r${i}/0`)!.tokens).to.deep.equal(await reference(PROMPTS[i]!, 10));
    expect(steps.reduce((n, s) => n + s.numPromptTokens, 0)).to.equal(
      PROMPTS.reduce((n, p) => n + promptIds(p).length, 0),
    );
  });

  it('should keep requests waiting when maxNumSeqs is saturated', async () => {
    const e = await engine(dirs.fast, { maxNumSeqs: 2 });
    PROMPTS.forEach((p, i) => e.addRequest(`r${i}`, p, { ...greedy, max_tokens: 4 }));
    const first = await e.step();
    expect(first.stats).to.deep.include({ numRunning: 2, numWaiting: 3 });
    const res = collect([first, ...(await drain(e))]);
    for (let i = 0; i < PROMPTS.length; i++)
      expect(res.get(`r${i}/0`)!.tokens).to.deep.equal(await reference(PROMPTS[i]!, 4));
  });

  it('should preempt under a tiny pool and still produce the unpreempted greedy tokens', async () => {
    const e = await engine(dirs.fast, { numBlocks: 10, blockSize: 4, rowGrowStep: 4 });
    const ps = ['Hello', 'a', 'zz', 'tiny pool'];
    ps.forEach((p, i) => e.addRequest(`r${i}`, p, { ...greedy, max_tokens: 20 }));
    const steps = await drain(e);
    const res = collect(steps);
    for (let i = 0; i < ps.length; i++)
      expect(res.get(`r${i}/0`)!.tokens, ps[i]).to.deep.equal(await reference(ps[i]!, 20));
    expect(totals(steps).preemptions).to.equal(5); // scheduling is deterministic: fixed prompts, lengths and pool
    expect(steps[steps.length - 1]!.stats).to.deep.include({ numRunning: 0, numWaiting: 0, kvCacheUsage: 0 });
  });

  it('should serve a repeated long prompt from the prefix cache with the same tokens', async () => {
    const long = PROMPTS[3]!.repeat(2); // 141 tokens with BOS
    const P = promptIds(long).length;
    const e = await engine(dirs.fast);
    e.addRequest('a', long, { ...greedy, max_tokens: 12 });
    const s1 = await drain(e);
    e.addRequest('b', long, { ...greedy, max_tokens: 12 });
    const s2 = await drain(e);
    const res = collect([...s1, ...s2]);
    const hits = Math.floor((P - 1) / 16) * 16;
    expect(totals(s2)).to.deep.include({ queries: P, hits });
    expect(res.get('b/0')!.prefill).to.deep.equal({
      numPromptTokens: P,
      numCachedTokens: hits,
      numComputedTokens: P - hits,
    });
    expect(s2.reduce((n, s) => n + s.numPromptTokens, 0)).to.equal(P - hits);
    expect(res.get('b/0')!.tokens).to.deep.equal(res.get('a/0')!.tokens);
    expect(res.get('a/0')!.tokens).to.deep.equal(await reference(long, 12));
  });

  it('should have no prefix hits with caching off', async () => {
    const long = PROMPTS[3]!;
    const e = await engine(dirs.fast, { enablePrefixCaching: false });
    e.addRequest('a', long, { ...greedy, max_tokens: 3 });
    await drain(e);
    e.addRequest('b', long, { ...greedy, max_tokens: 3 });
    expect(totals(await drain(e))).to.deep.include({ queries: 0, hits: 0 });
  });

  it('should give the same greedy tokens with the usual exported layout (hf runner)', async () => {
    const e = await engine(dirs.hf);
    PROMPTS.slice(0, 3).forEach((p, i) => e.addRequest(`r${i}`, p, { ...greedy, max_tokens: 10 }));
    const res = collect(await drain(e));
    for (let i = 0; i < 3; i++) expect(res.get(`r${i}/0`)!.tokens).to.deep.equal(await reference(PROMPTS[i]!, 10));
  });

  it('should reuse prefix blocks in the hf runner too', async () => {
    const long = PROMPTS[3]!;
    const e = await engine(dirs.hf);
    e.addRequest('a', long, { ...greedy, max_tokens: 6 });
    await drain(e);
    e.addRequest('b', long, { ...greedy, max_tokens: 6 });
    const s2 = await drain(e);
    expect(totals(s2).hits).to.equal(64);
    expect(collect(s2).get('b/0')!.tokens).to.deep.equal(await reference(long, 6));
  });

  it('should share a prompt between n=3 children within one step in the hf runner too', async () => {
    const long = PROMPTS[3]!;
    const e = await engine(dirs.hf);
    e.addRequest('n3', long, { ...greedy, n: 3, max_tokens: 4 });
    const steps = await drain(e);
    // 68 prompt tokens: the first child computes them all, its siblings adopt 4 blocks (64).
    expect(steps[0]!.numPromptTokens).to.equal(68 + 2 * 4);
    expect(totals(steps)).to.deep.include({ queries: 3 * 68, hits: 2 * 64 });
    const want = await reference(long, 4);
    const res = collect(steps);
    expect([0, 1, 2].map((i) => res.get(`n3/${i}`)!.tokens)).to.deep.equal([want, want, want]);
  });

  it('should sample n=2 reproducibly for a seed, stop at stop strings, and abort', async () => {
    const llm = new LLM(await engine(dirs.fast));
    const sampled = { temperature: 0.8, top_p: 0.95, top_k: 50, seed: 42, n: 2, max_tokens: 12, ignore_eos: true };
    const [a] = await llm.generate(['Hello'], sampled);
    const [b] = await llm.generate(['Hello'], sampled);
    expect(a!.outputs.map((o) => o.tokenIds)).to.deep.equal(b!.outputs.map((o) => o.tokenIds));
    expect(a!.outputs.map((o) => o.tokenIds.length)).to.deep.equal([12, 12]);
    expect(a!.outputs[0]!.tokenIds).to.not.deep.equal(a!.outputs[1]!.tokenIds);

    const full = await llm.generate(['The quick'], { ...greedy, max_tokens: 20 });
    const ids = full[0]!.outputs[0]!.tokenIds;
    const stop = Buffer.from(ids.slice(6, 8)).toString('latin1');
    const cutAt = Buffer.from(ids).toString('latin1').indexOf(stop);
    const [s] = await llm.generate(['The quick'], { ...greedy, max_tokens: 20, stop: [stop] });
    expect(s!.outputs[0]).to.deep.include({ finishReason: 'stop', stopReason: stop });
    expect(s!.outputs[0]!.tokenIds).to.deep.equal(ids.slice(0, cutAt + 2));

    const e = llm.engine;
    e.addRequest('ab', 'abort me', { ...greedy, max_tokens: 100 });
    await e.step();
    await e.step();
    e.abort('ab');
    const res = collect(await drain(e)).get('ab/0')!;
    expect(res).to.deep.include({ finishReason: 'abort', numGenerationTokens: 2 });
  });
});
