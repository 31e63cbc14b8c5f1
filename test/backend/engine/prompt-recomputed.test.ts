/**
 * vLLM's recomputed prompt tokens (`prompt_tokens_recomputed`): cached prompt tokens computed
 * again at a sequence's first prefill. A prefix hit stops one token short of the prompt, so a
 * prompt that ends on a cached full block has that block computed again; the engine reports it
 * in the first output's prefill stats, and the fake runner's computed-token count is the truth.
 */
import { expect } from 'chai';
import { collect, drain, fakeEngine } from './harness.js';

const greedy = { temperature: 0 };
/** A prompt of exactly `n` tokens (BOS, then letters), the same for the same `n`. */
const promptOf = (n: number): number[] => [256, ...Array.from({ length: n - 1 }, (_, i) => 97 + ((i * 5) % 26))];

describe('Recomputed prompt tokens (vLLM prompt_tokens_recomputed)', () => {
  it('should report the 16 cached tokens of a fully cached two-block prompt as recomputed, and compute exactly them', async () => {
    const { engine, runner } = fakeEngine({ blockSize: 16 });
    engine.addRequest('a', promptOf(32), { ...greedy, max_tokens: 1 });
    const first = collect(await drain(engine));
    const before = runner.computedTokens;
    engine.addRequest('b', promptOf(32), { ...greedy, max_tokens: 1 });
    const second = collect(await drain(engine));
    expect(first.get('a/0')!.prefill).to.deep.equal({ numPromptTokens: 32, numCachedTokens: 0, numComputedTokens: 32 });
    expect(second.get('b/0')!.prefill).to.deep.equal({
      numPromptTokens: 32,
      numCachedTokens: 16,
      numComputedTokens: 16,
      numRecomputedTokens: 16,
    });
    // The 16 recomputed tokens are all the second request computed (one output token, no decode step).
    expect(runner.computedTokens - before).to.equal(16);
  });

  it('should report none for a prompt whose last token lies past its cached full blocks (40 tokens: 32 hit, 8 new)', async () => {
    const { engine } = fakeEngine({ blockSize: 16 });
    engine.addRequest('a', promptOf(40), { ...greedy, max_tokens: 1 });
    await drain(engine);
    engine.addRequest('b', promptOf(40), { ...greedy, max_tokens: 1 });
    expect(collect(await drain(engine)).get('b/0')!.prefill).to.deep.equal({
      numPromptTokens: 40,
      numCachedTokens: 32,
      numComputedTokens: 8,
    });
  });

  it('should report a one-block prompt found cached as 16 recomputed with 0 cached', async () => {
    const { engine } = fakeEngine({ blockSize: 16 });
    engine.addRequest('a', promptOf(16), { ...greedy, max_tokens: 1 });
    await drain(engine);
    engine.addRequest('b', promptOf(16), { ...greedy, max_tokens: 1 });
    expect(collect(await drain(engine)).get('b/0')!.prefill).to.deep.equal({
      numPromptTokens: 16,
      numCachedTokens: 0,
      numComputedTokens: 16,
      numRecomputedTokens: 16,
    });
  });

  it('should report none with prefix caching off (nothing is cached to recompute)', async () => {
    const { engine } = fakeEngine({ blockSize: 16, enablePrefixCaching: false });
    engine.addRequest('a', promptOf(32), { ...greedy, max_tokens: 1 });
    await drain(engine);
    engine.addRequest('b', promptOf(32), { ...greedy, max_tokens: 1 });
    expect(collect(await drain(engine)).get('b/0')!.prefill).to.deep.equal({
      numPromptTokens: 32,
      numCachedTokens: 0,
      numComputedTokens: 32,
    });
  });
});
