import { expect } from 'chai';
import { LLM } from '../../../backend/engine/llm.js';
import { collect, drain, fakeEngine, totals } from './harness.js';
import { fakeGreedy } from './fake-runner.js';

const greedy = { temperature: 0 };
/** A prompt of exactly `n` tokens (BOS, a byte that differs per `seed` below 90, then letters). */
const promptOf = (n: number, seed: number): number[] => [
  256,
  33 + (seed % 90),
  ...Array.from({ length: n - 2 }, (_, i) => 97 + ((i * 7 + seed) % 26)),
];

describe('Scheduler (vLLM v1 by default)', () => {
  it('should give each of 16 decoders exactly one token in every step while a 100-token prompt arrives each step', async () => {
    const { engine } = fakeEngine({ maxNumSeqs: 64, numBlocks: 1024 });
    for (let i = 0; i < 16; i++)
      engine.addRequest(`d${i}`, promptOf(8, i), { ...greedy, max_tokens: 40, ignore_eos: true });
    const first = await engine.step();
    expect(first.outputs.filter((o) => o.newTokenIds.length === 1)).to.have.length(16);
    for (let s = 0; s < 30; s++) {
      engine.addRequest(`a${s}`, promptOf(100, 100 + s), { ...greedy, max_tokens: 1 });
      const out = await engine.step();
      const perDecoder = Array.from({ length: 16 }, (_, i) =>
        out.outputs.filter((o) => o.requestId === `d${i}`).reduce((n, o) => n + o.newTokenIds.length, 0),
      );
      expect(perDecoder, `step ${s}`).to.deep.equal(new Array<number>(16).fill(1));
      // The arrival's whole prompt ran in the same step as the 16 decodes.
      expect(out.numPromptTokens).to.equal(100);
      expect(out.numGenerationTokens).to.equal(17);
    }
  });

  it('should keep prefill-first as an option (enableChunkedPrefill: false): an admissible arrival makes a prefill-only step', async () => {
    const { engine } = fakeEngine({ enableChunkedPrefill: false, maxNumSeqs: 64 });
    for (let i = 0; i < 4; i++) engine.addRequest(`d${i}`, promptOf(8, i), { ...greedy, max_tokens: 10 });
    await engine.step();
    engine.addRequest('a', promptOf(100, 1), { ...greedy, max_tokens: 1 });
    const out = await engine.step();
    expect(out.outputs.map((o) => o.requestId)).to.deep.equal(['a']);
    expect(out.numPromptTokens).to.equal(100);
  });
});

describe('KV budget (blocks and working rows)', () => {
  it("should reject a request whose working row alone exceeds the rows' share of the budget", () => {
    // Fake model: 8 bytes per position; 16 blocks of 16 = 256 positions, so 3072 bytes leave rows 128.
    const { engine } = fakeEngine({ numBlocks: 16, kvCacheBytes: 3072 });
    expect(() => engine.addRequest('big', promptOf(100, 1), { max_tokens: 50 })).to.throw(
      '150 tokens need a working row of 256 positions; the KV budget leaves rows 128',
    );
  });

  it('should report usage 1.0 when blocks and rows are full, then preempt instead of growing a row', async () => {
    // 8 blocks of 16 (128 positions) and, numBlocks alone, rows of 128 positions.
    const { engine } = fakeEngine({ numBlocks: 8 });
    engine.addRequest('a', promptOf(64, 1), { ...greedy, max_tokens: 2, ignore_eos: true });
    engine.addRequest('b', promptOf(64, 2), { ...greedy, max_tokens: 2, ignore_eos: true });
    const s1 = await engine.step();
    expect(s1.stats).to.deep.include({ numRunning: 2, numWaiting: 0, kvCacheUsage: 1 });
    expect(engine.kv.rowPositionsUsed).to.equal(128);
    // Position 64 needs a fifth block and a row of 128 for 'a': the newest ('b') is preempted.
    const s2 = await engine.step();
    expect(s2.stats).to.deep.include({ numRunning: 0, numWaiting: 1, numPreemptions: 1 });
    expect(s2.outputs.map((o) => [o.requestId, o.finishReason ?? null])).to.deep.equal([['a', 'length']]);
    const res = collect([s1, s2, ...(await drain(engine))]);
    expect(res.get('b/0')!.tokens).to.deep.equal(fakeGreedy(promptOf(64, 2), 2));
    expect(engine.kv.usage()).to.equal(0);
  });
});

describe('Prefix sharing within a step', () => {
  it('should compute a 64-token prompt once for n=4 (64 + 3×16 tokens, 3×48 hits of 256 queried)', async () => {
    const { engine, runner } = fakeEngine();
    const p = promptOf(64, 5);
    engine.addRequest('n4', p, { temperature: 0.7, seed: 3, n: 4, max_tokens: 1 });
    const first = await engine.step();
    expect(first.numPromptTokens).to.equal(112);
    expect(runner.computedTokens).to.equal(112);
    expect(first.stats).to.deep.include({ prefixCacheQueries: 256, prefixCacheHits: 144 });
    expect(first.outputs.map((o) => o.prefill)).to.deep.equal([
      { numPromptTokens: 64, numCachedTokens: 0, numComputedTokens: 64 },
      // The siblings find all 4 blocks registered and compute the last one again (3×16 of the 112).
      { numPromptTokens: 64, numCachedTokens: 48, numComputedTokens: 16, numRecomputedTokens: 16 },
      { numPromptTokens: 64, numCachedTokens: 48, numComputedTokens: 16, numRecomputedTokens: 16 },
      { numPromptTokens: 64, numCachedTokens: 48, numComputedTokens: 16, numRecomputedTokens: 16 },
    ]);
  });

  it('should give identical prompts sent together the tokens each gets alone, computing the shared blocks once', async () => {
    const { engine, runner } = fakeEngine();
    const p = promptOf(40, 9);
    for (let i = 0; i < 4; i++) engine.addRequest(`r${i}`, p, { ...greedy, max_tokens: 6 });
    const steps = await drain(engine);
    const res = collect(steps);
    for (let i = 0; i < 4; i++) expect(res.get(`r${i}/0`)!.tokens).to.deep.equal(fakeGreedy(p, 6));
    // 40 + 3 × (40 − 32) prompt tokens, then 5 decode tokens each.
    expect(runner.computedTokens).to.equal(40 + 3 * 8 + 4 * 5);
    expect(totals(steps)).to.deep.include({ queries: 160, hits: 96 });
  });
});

describe('EngineCore errors and concurrency', () => {
  it('should finish only the requests of a failed run with error and go on with the others', async () => {
    const { engine, runner } = fakeEngine();
    engine.addRequest('ok', 'fine prompt', { ...greedy, max_tokens: 5 });
    engine.addRequest('bad', 'doomed prompt', { ...greedy, max_tokens: 5 });
    await engine.step();
    runner.failNext.add(1);
    const s = await engine.step();
    expect(s.outputs.map((o) => [o.requestId, o.finishReason ?? null, o.newTokenIds.length])).to.deep.equal([
      ['bad', 'error', 0],
      ['ok', null, 1],
    ]);
    expect(engine.takeError()).to.equal(
      'model run failed: injected failure for seq 1 (requests bad finished with error)',
    );
    const res = collect(await drain(engine));
    expect(res.get('ok/0')!.finishReason).to.equal('length');
    expect(engine.numRequests).to.equal(0);
  });

  it('should finish only a sequence whose logits leave nothing to sample, never feeding it to the next run', async () => {
    const { engine, runner } = fakeEngine();
    engine.addRequest('ok', 'fine prompt', { ...greedy, max_tokens: 5 });
    engine.addRequest('nan', 'doomed prompt', { temperature: 1, seed: 3, max_tokens: 5 });
    await engine.step();
    runner.nanNext.add(1);
    const s = await engine.step();
    expect(s.outputs.map((o) => [o.requestId, o.finishReason ?? null, o.newTokenIds.length])).to.deep.equal([
      ['nan', 'error', 0],
      ['ok', null, 1],
    ]);
    // Not an engine failure: the other requests of the engine are not failed with it.
    expect(engine.takeError()).to.equal(undefined);
    const res = collect(await drain(engine));
    expect(res.get('ok/0')!).to.deep.include({
      finishReason: 'length',
      tokens: fakeGreedy([256, ...Buffer.from('fine prompt', 'utf8')], 5).slice(2),
    });
    expect(engine.numRequests).to.equal(0);
  });

  it('should fail the siblings that adopted blocks of a failed prefill and uncache those blocks', async () => {
    const { engine, runner } = fakeEngine();
    const p = promptOf(64, 2);
    runner.failNext.add(0);
    engine.addRequest('n3', p, { ...greedy, n: 3, max_tokens: 2 });
    engine.addRequest('other', 'unrelated', { ...greedy, max_tokens: 2 });
    const s = await engine.step();
    expect(s.outputs.map((o) => [o.requestId, o.index, o.finishReason ?? null])).to.deep.equal([
      ['n3', 0, 'error'],
      ['n3', 1, 'error'],
      ['n3', 2, 'error'],
      ['other', 0, null],
    ]);
    expect(engine.kv.pool.numCached).to.equal(0);
    engine.addRequest('again', p, { ...greedy, max_tokens: 2 });
    const res = collect(await drain(engine));
    expect(res.get('again/0')).to.deep.include({ tokens: fakeGreedy(p, 2), finishReason: 'length' });
    expect(res.get('again/0')!.prefill).to.deep.equal({
      numPromptTokens: 64,
      numCachedTokens: 0,
      numComputedTokens: 64,
    });
  });

  it('should refuse a step() while another runs', async () => {
    const { engine } = fakeEngine();
    engine.addRequest('a', 'x', { ...greedy, max_tokens: 2 });
    const running = engine.step();
    let refused = '';
    await engine.step().catch((e: Error) => (refused = e.message));
    await running;
    expect(refused).to.equal('EngineCore.step() is already running: one loop must drive the engine');
  });

  it('should give concurrent LLM.generate calls the outputs of sequential ones', async () => {
    const prompts = [['alpha beta', 'gamma'], ['delta epsilon zeta', 'eta'], ['theta']];
    const params = { temperature: 0.9, seed: 11, max_tokens: 9, n: 2 };
    const seq = new LLM(fakeEngine().engine);
    const sequential = [];
    for (const p of prompts) sequential.push(await seq.generate(p, params));
    const conc = new LLM(fakeEngine().engine);
    const concurrent = await Promise.all(prompts.map((p) => conc.generate(p, params)));
    const strip = (
      rs: readonly (readonly { outputs: readonly unknown[]; promptTokenIds: readonly number[] }[])[],
    ): unknown => rs.map((r) => r.map((c) => ({ p: c.promptTokenIds, o: c.outputs })));
    expect(strip(concurrent)).to.deep.equal(strip(sequential));
    expect(conc.engine.numRequests).to.equal(0);
  });
});
