import { expect } from 'chai';
import { collect, drain, fakeEngine, totals } from './harness.js';
import { fakeGreedy } from './fake-runner.js';

const enc = (s: string): number[] => [256, ...Buffer.from(s, 'utf8')];
const text = (ids: readonly number[]): string => Buffer.from(ids.filter((t) => t < 256)).toString('utf8');
const greedy = { temperature: 0 };

describe('EngineCore (fake runner)', () => {
  it('should generate exactly the no-cache greedy continuation and finish with length', async () => {
    const { engine } = fakeEngine();
    engine.addRequest('a', 'hello world', { ...greedy, max_tokens: 20 });
    const r = collect(await drain(engine)).get('a/0')!;
    const ref = fakeGreedy(enc('hello world'), 20);
    expect(r.tokens).to.deep.equal(ref);
    expect(r.text).to.equal(text(ref));
    expect(r.finishReason).to.equal('length');
    expect(r.numGenerationTokens).to.equal(20);
    expect(r.outputs).to.equal(20);
    expect(r.prefill).to.deep.equal({ numPromptTokens: 12, numCachedTokens: 0, numComputedTokens: 12 });
    expect(r.events.map((e) => e.type)).to.deep.equal(['QUEUED', 'SCHEDULED']);
  });

  it('should give each sequence of a mixed-length batch the same tokens as alone', async () => {
    const prompts = ['a', 'the quick brown fox jumps', 'xyz xyz xyz xyz xyz xyz xyz xyz xyz xyz', 'mid length prompt'];
    const { engine } = fakeEngine();
    prompts.forEach((p, i) => engine.addRequest(`r${i}`, p, { ...greedy, max_tokens: 10 + i * 7 }));
    const res = collect(await drain(engine));
    prompts.forEach((p, i) => expect(res.get(`r${i}/0`)!.tokens).to.deep.equal(fakeGreedy(enc(p), 10 + i * 7)));
  });

  it('should keep requests waiting when maxNumSeqs is saturated', async () => {
    const { engine } = fakeEngine({ maxNumSeqs: 2 });
    for (let i = 0; i < 5; i++) engine.addRequest(`r${i}`, `prompt ${i}`, { ...greedy, max_tokens: 4 });
    const first = await engine.step();
    expect(first.stats).to.deep.include({ numRunning: 2, numWaiting: 3 });
    expect(first.outputs.map((o) => o.requestId)).to.deep.equal(['r0', 'r1']);
    const steps = [first, ...(await drain(engine))];
    const res = collect(steps);
    for (let i = 0; i < 5; i++) expect(res.get(`r${i}/0`)!.tokens).to.deep.equal(fakeGreedy(enc(`prompt ${i}`), 4));
    expect(steps[steps.length - 1]!.stats).to.deep.include({ numRunning: 0, numWaiting: 0, kvCacheUsage: 0 });
  });

  it('should preempt the newest sequence when the pool is full and still match greedy', async () => {
    const { engine } = fakeEngine({ numBlocks: 12, blockSize: 4, rowGrowStep: 4, enablePrefixCaching: false });
    const prompts = ['abcdef', 'ghijk', 'lmnopqr', 'stu'];
    prompts.forEach((p, i) => engine.addRequest(`r${i}`, p, { ...greedy, max_tokens: 24 }));
    const steps = await drain(engine);
    const res = collect(steps);
    prompts.forEach((p, i) => expect(res.get(`r${i}/0`)!.tokens).to.deep.equal(fakeGreedy(enc(p), 24)));
    const t = totals(steps);
    expect(t.preemptions).to.equal(4); // deterministic: fake runner, fixed prompts and pool (v1 scheduling, rows charged to the budget)
    const preemptedEvents = [...res.values()].reduce(
      (n, r) => n + r.events.filter((e) => e.type === 'PREEMPTED').length,
      0,
    );
    expect(preemptedEvents).to.equal(t.preemptions);
    // The newest sequence is the first victim.
    expect(
      res
        .get('r3/0')!
        .events.map((e) => e.type)
        .slice(0, 3),
    ).to.deep.equal(['QUEUED', 'SCHEDULED', 'PREEMPTED']);
  });

  it('should reuse cached prefix blocks for a repeated prompt (hits ≤ P−1, block multiple)', async () => {
    const prompt = 'x'.repeat(39); // 40 tokens with BOS
    const { engine, runner } = fakeEngine({ blockSize: 16 });
    engine.addRequest('a', prompt, { ...greedy, max_tokens: 5 });
    const s1 = await drain(engine);
    const computedFirst = runner.computedTokens;
    engine.addRequest('b', prompt, { ...greedy, max_tokens: 5 });
    const s2 = await drain(engine);
    const res = collect([...s1, ...s2]);
    expect(res.get('b/0')!.tokens).to.deep.equal(res.get('a/0')!.tokens);
    expect(res.get('b/0')!.prefill).to.deep.equal({ numPromptTokens: 40, numCachedTokens: 32, numComputedTokens: 8 });
    expect(totals(s1)).to.deep.include({ queries: 40, hits: 0 });
    expect(totals(s2)).to.deep.include({ queries: 40, hits: 32 });
    expect(runner.computedTokens - computedFirst).to.equal(8 + 4);
    expect(runner.rowsFromBlocks).to.equal(1);
  });

  it('should cap a full-prompt hit at P−1 so the last prompt token is computed', async () => {
    const prompt = 'y'.repeat(31); // 32 tokens = 2 full blocks
    const { engine } = fakeEngine({ blockSize: 16 });
    engine.addRequest('a', prompt, { ...greedy, max_tokens: 2 });
    await drain(engine);
    engine.addRequest('b', prompt, { ...greedy, max_tokens: 2 });
    expect(totals(await drain(engine))).to.deep.include({ queries: 32, hits: 16 });
  });

  it('should neither hit nor count queries with prefix caching off', async () => {
    const prompt = 'x'.repeat(39);
    const { engine, runner } = fakeEngine({ enablePrefixCaching: false });
    engine.addRequest('a', prompt, { ...greedy, max_tokens: 5 });
    engine.addRequest('b', prompt, { ...greedy, max_tokens: 5 });
    const steps = await drain(engine);
    expect(totals(steps)).to.deep.include({ queries: 0, hits: 0 });
    expect(collect(steps).get('b/0')!.prefill).to.deep.equal({
      numPromptTokens: 40,
      numCachedTokens: 0,
      numComputedTokens: 40,
    });
    expect(runner.rowsFromBlocks).to.equal(0);
  });

  it('should fan n=2 out into two sequences with seeds seed and seed+1', async () => {
    const { engine } = fakeEngine();
    engine.addRequest('p', 'once upon', { temperature: 1, seed: 7, n: 2, max_tokens: 12 });
    const res = collect(await drain(engine));
    expect([...res.keys()].sort()).to.deep.equal(['p/0', 'p/1']);
    const { engine: e2 } = fakeEngine();
    e2.addRequest('q0', 'once upon', { temperature: 1, seed: 7, max_tokens: 12 });
    e2.addRequest('q1', 'once upon', { temperature: 1, seed: 8, max_tokens: 12 });
    const alone = collect(await drain(e2));
    expect(res.get('p/0')!.tokens).to.deep.equal(alone.get('q0/0')!.tokens);
    expect(res.get('p/1')!.tokens).to.deep.equal(alone.get('q1/0')!.tokens);
    expect(res.get('p/0')!.tokens).to.not.deep.equal(res.get('p/1')!.tokens);
  });

  it('should reproduce sampled tokens for the same seed', async () => {
    const run = async (seed: number): Promise<number[]> => {
      const { engine } = fakeEngine();
      engine.addRequest('s', 'seeded', { temperature: 0.9, top_p: 0.9, top_k: 10, seed, max_tokens: 16 });
      return collect(await drain(engine)).get('s/0')!.tokens;
    };
    const a = await run(1234);
    expect(await run(1234)).to.deep.equal(a);
    expect(await run(4321)).to.not.deep.equal(a);
  });

  it('should sample seed 2^32 + 1234 apart from seed 1234, and fan n=3 out at 2^53 - 2 into three streams (the seed lost its high half; seed + i rounded)', async () => {
    const run = async (seed: number, n = 1): Promise<number[][]> => {
      const { engine } = fakeEngine();
      engine.addRequest('s', 'seeded', { temperature: 1, seed, n, max_tokens: 16 });
      const res = collect(await drain(engine));
      return Array.from({ length: n }, (_v, i) => res.get(`s/${i}`)!.tokens);
    };
    const [low] = await run(1234);
    expect(await run(2 ** 32 + 1234)).to.not.deep.equal([low]);
    expect(await run(2 ** 32 + 1234)).to.deep.equal(await run(2 ** 32 + 1234));
    const [c0, c1, c2] = await run(2 ** 53 - 2, 3);
    expect(new Set([c0!.join(), c1!.join(), c2!.join()]).size).to.equal(3);
    expect(await run(2 ** 53 - 1)).to.deep.equal([c1]);
  });

  it('should stop at a stop string, cut it from the text and report it', async () => {
    const ref = text(fakeGreedy(enc('stop here'), 30));
    const stop = ref.slice(10, 13);
    const cut = ref.indexOf(stop);
    const { engine } = fakeEngine();
    engine.addRequest('s', 'stop here', { ...greedy, max_tokens: 30, stop: [stop, 'never-there'] });
    const r = collect(await drain(engine)).get('s/0')!;
    expect(r.text).to.equal(ref.slice(0, cut));
    expect(r.finishReason).to.equal('stop');
    expect(r.stopReason).to.equal(stop);
    expect(r.tokens.length).to.equal(cut + stop.length);
  });

  it('should finish with stop on EOS, and continue past it with ignore_eos', async () => {
    const { engine } = fakeEngine({}, 8);
    engine.addRequest('e', 'abc', { ...greedy, max_tokens: 20 });
    engine.addRequest('i', 'abc', { ...greedy, max_tokens: 20, ignore_eos: true });
    const res = collect(await drain(engine));
    expect(res.get('e/0')!.tokens.length).to.equal(5);
    expect(res.get('e/0')!.tokens[4]).to.equal(257);
    expect(res.get('e/0')!.finishReason).to.equal('stop');
    expect(res.get('e/0')!.stopReason).to.equal(undefined);
    expect(res.get('i/0')!.finishReason).to.equal('length');
    expect(res.get('i/0')!.tokens.length).to.equal(20);
  });

  it('should finish aborted requests with abort, running or waiting', async () => {
    const { engine } = fakeEngine({ maxNumSeqs: 1 });
    engine.addRequest('run', 'aaa', { ...greedy, max_tokens: 50 });
    engine.addRequest('wait', 'bbb', { ...greedy, max_tokens: 50 });
    await engine.step();
    await engine.step();
    expect(engine.abort('run')).to.equal(true);
    expect(engine.abort('wait')).to.equal(true);
    expect(engine.abort('nope')).to.equal(false);
    const steps = await drain(engine);
    expect(steps.length).to.equal(1);
    const res = collect(steps);
    expect(res.get('run/0')).to.deep.include({ finishReason: 'abort', tokens: [], numGenerationTokens: 2 });
    expect(res.get('wait/0')).to.deep.include({ finishReason: 'abort', tokens: [], numGenerationTokens: 0 });
    expect(steps[0]!.stats).to.deep.include({ numRunning: 0, numWaiting: 0, kvCacheUsage: 0 });
    expect(engine.numRequests).to.equal(0);
  });

  it('should defer an abort that arrives while a step runs to the next step', async () => {
    const { engine } = fakeEngine();
    engine.addRequest('r', 'abc', { ...greedy, max_tokens: 50 });
    const pending = engine.step();
    expect(engine.abort('r')).to.equal(true);
    const first = await pending;
    expect(first.outputs.map((o) => [o.requestId, o.newTokenIds.length, o.finishReason])).to.deep.equal([
      ['r', 1, undefined],
    ]);
    const rest = await drain(engine);
    expect(rest.length).to.equal(1);
    expect(rest[0]!.outputs.map((o) => [o.requestId, o.newTokenIds.length, o.finishReason])).to.deep.equal([
      ['r', 0, 'abort'],
    ]);
    expect(rest[0]!.stats).to.deep.include({ numRunning: 0, numWaiting: 0, kvCacheUsage: 0 });
  });

  it('should chunk long prefills and still match greedy', async () => {
    const { engine, runner } = fakeEngine({
      enableChunkedPrefill: true,
      prefillChunkSize: 16,
      maxNumBatchedTokens: 24,
    });
    const long = 'q'.repeat(60);
    engine.addRequest('short', 'hi', { ...greedy, max_tokens: 8 });
    engine.addRequest('long', long, { ...greedy, max_tokens: 8 });
    const steps = await drain(engine);
    const res = collect(steps);
    expect(res.get('short/0')!.tokens).to.deep.equal(fakeGreedy(enc('hi'), 8));
    expect(res.get('long/0')!.tokens).to.deep.equal(fakeGreedy(enc(long), 8));
    expect(steps.reduce((n, s) => n + s.numPromptTokens, 0)).to.equal(3 + 61);
    expect(runner.computedTokens).to.equal(3 + 61 + 7 + 7);
  });

  it('should keep counter totals when stats are throttled', async () => {
    const run = async (statsIntervalMs: number) => {
      const { engine } = fakeEngine({ statsIntervalMs, numBlocks: 12, blockSize: 4, rowGrowStep: 4 });
      ['abcdef', 'abcdef', 'lmnopqr', 'stu'].forEach((p, i) =>
        engine.addRequest(`r${i}`, p, { ...greedy, max_tokens: 24 }),
      );
      const steps = await drain(engine);
      return { steps: steps.length, t: totals(steps) };
    };
    const every = await run(0);
    const throttled = await run(1e9);
    expect(every.t.records).to.equal(every.steps);
    expect(throttled.t.records).to.equal(2);
    expect(throttled.t).to.deep.equal({ ...every.t, records: 2 });
    expect(every.t.steps).to.equal(every.steps);
    expect(every.t.preemptions).to.equal(4);
  });

  it('should build no scheduler stats at all with disableLogStats (--disable-log-stats)', async () => {
    const { engine } = fakeEngine({ disableLogStats: true, numBlocks: 12, blockSize: 4, rowGrowStep: 4 });
    ['abcdef', 'lmnopqr'].forEach((p, i) => engine.addRequest(`r${i}`, p, { ...greedy, max_tokens: 6 }));
    const steps = await drain(engine);
    expect(steps.length).to.be.greaterThan(0);
    expect(steps.filter((s) => s.stats !== undefined).length).to.equal(0);
  });

  it('should stamp events and finished timings on the engine clock', async () => {
    const { engine } = fakeEngine();
    engine.addRequest('t', 'time', { ...greedy, max_tokens: 3 });
    const steps = await drain(engine);
    const outs = steps.flatMap((s) => s.outputs.map((o) => ({ o, ts: s.timestamp })));
    const first = outs[0]!;
    const last = outs[outs.length - 1]!;
    const [queued, scheduled] = first.o.events;
    expect(last.o.timings).to.deep.equal({
      queueMs: scheduled!.ts - queued!.ts,
      prefillMs: first.ts - scheduled!.ts,
      decodeMs: last.ts - first.ts,
      inferenceMs: last.ts - scheduled!.ts,
    });
  });
});
