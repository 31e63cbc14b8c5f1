import { expect } from 'chai';
import { tokenLogprobs } from '../../../backend/engine/logprobs.js';
import { PenaltyState, processLogits } from '../../../backend/engine/logits-processors.js';
import { NO_TOKEN, Prng, prngFor, resolveSamplingParams, sampleToken } from '../../../backend/engine/sampling.js';
import { MAX_SEED } from '../../../schema/sampling-params-check.js';
import { sortedIds, topKIds } from '../../../backend/engine/top-candidates.js';
import { fullSortSample } from '../../../tools/bench/full-sort-sampler.js';

/** A reproducible logit row of `v` entries (the Prng, scaled to [-8, 8)). */
function row(v: number, seed: number): Float32Array {
  const r = new Prng(seed);
  return Float32Array.from({ length: v }, () => (r.next() - 0.5) * 16);
}

describe('topKIds', () => {
  it('should select the k largest ids largest first, ties to the lower id, as a full sort orders them', () => {
    const v = Float32Array.from([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, -Infinity]);
    expect([...topKIds(v, 4)]).to.deep.equal([5, 7, 4, 8]);
    expect([...topKIds(v, 20)]).to.deep.equal(sortedIds(v));
    expect([...topKIds(v, 3, 5)]).to.deep.equal([5, 7, 4]);
    expect([...topKIds(v, 0)]).to.deep.equal([]);
    const big = row(32000, 9);
    expect([...topKIds(big, 50)]).to.deep.equal(sortedIds(big).slice(0, 50));
  });
});

/** The first `k` draws of a generator. */
const draws = (r: Prng, k = 3): number[] => Array.from({ length: k }, () => r.next());

describe('Prng', () => {
  it("should draw mulberry32's stream unchanged for a seed below 2^32 (pinned samples and users' seeds keep their outputs)", () => {
    expect(draws(new Prng(1))).to.deep.equal([0.6270739405881613, 0.002735721180215478, 0.5274470399599522]);
    expect(draws(new Prng(2 ** 32 - 1))).to.deep.equal([0.8964226141106337, 0.189478256739676, 0.7156526781618595]);
  });

  it('should give seeds 1 and 2^32 + 1 different streams (the seed was cut to its low 32 bits: they drew alike)', () => {
    expect(draws(new Prng(2 ** 32 + 1))).to.deep.equal([0.009450624231249094, 0.42946176300756633, 0.6568589806556702]);
    expect(draws(new Prng(2 ** 32 + 1))).to.deep.equal(draws(new Prng(2 ** 32 + 1)));
    expect(draws(new Prng(MAX_SEED))).to.deep.equal([0.7382430387660861, 0.38249507965520024, 0.916087559890002]);
    expect(draws(new Prng(MAX_SEED))).to.not.deep.equal(draws(new Prng(2 ** 32 - 1)));
  });

  it("should add an n > 1 child's index to the seed exactly, past 2^32 and 2^53 (seed + i rounded: children 1 and 2 of 2^53 - 1 drew alike)", () => {
    expect(draws(prngFor(5, 3))).to.deep.equal(draws(new Prng(8)));
    expect(draws(prngFor(2 ** 32 - 1, 2))).to.deep.equal(draws(new Prng(2 ** 32 + 1)));
    const children = [0, 1, 2, 3].map((i) => draws(prngFor(MAX_SEED, i)));
    expect(new Set(children.map((d) => d.join())).size).to.equal(4);
    expect(children[1]).to.deep.equal(draws(prngFor(MAX_SEED - 1, 2)));
  });
});

describe('sampleToken', () => {
  it('should pick the same tokens as a full sort for top-k, top-p and both, seed by seed', () => {
    const logits = row(4096, 3);
    for (const [topK, topP] of [
      [50, 1],
      [0, 0.9],
      [0, 0.99],
      [40, 0.8],
    ] as const) {
      const params = resolveSamplingParams({ temperature: 0.8, top_k: topK, top_p: topP });
      for (let seed = 0; seed < 50; seed++) {
        const ours = sampleToken(Float32Array.from(logits), params, new Prng(seed), []);
        expect(ours, `top_k ${topK} top_p ${topP} seed ${seed}`).to.equal(
          fullSortSample(logits, 0.8, topK, topP, new Prng(seed)),
        );
      }
    }
  });

  it('should keep only tokens with p >= min_p × p_max', () => {
    // At temperature 1: p ∝ e^l; min_p 0.5 keeps l >= max + ln 0.5, i.e. ids 0 (l=2) and 1 (l=1.5).
    const logits = Float32Array.from([2, 1.5, 1.2, -1]);
    const params = resolveSamplingParams({ temperature: 1, min_p: 0.5 });
    const seen = new Set<number>();
    for (let seed = 0; seed < 200; seed++) seen.add(sampleToken(Float32Array.from(logits), params, new Prng(seed), []));
    expect([...seen].sort()).to.deep.equal([0, 1]);
    const all = new Set<number>();
    for (let seed = 0; seed < 200; seed++)
      all.add(sampleToken(Float32Array.from(logits), resolveSamplingParams({ temperature: 1 }), new Prng(seed), []));
    expect([...all].sort()).to.deep.equal([0, 1, 2, 3]);
  });

  it('should never sample a banned id', () => {
    const params = resolveSamplingParams({ temperature: 2 });
    for (let seed = 0; seed < 100; seed++)
      expect(sampleToken(Float32Array.from([5, 5, 5]), params, new Prng(seed), [1])).to.not.equal(1);
  });

  it('should return NO_TOKEN, greedy or sampled, when every id is banned or NaN, and never let a NaN win', () => {
    for (const temperature of [0, 1]) {
      for (const top of [{}, { top_k: 2 }, { top_p: 0.5 }]) {
        const params = resolveSamplingParams({ temperature, ...top });
        expect(sampleToken(Float32Array.from([5, 5, 5]), params, new Prng(1), [0, 1, 2])).to.equal(NO_TOKEN);
        expect(sampleToken(Float32Array.from([NaN, NaN, NaN]), params, new Prng(1), [])).to.equal(NO_TOKEN);
      }
    }
    expect(NO_TOKEN).to.equal(-1);
    expect(
      sampleToken(Float32Array.from([NaN, 1, 3]), resolveSamplingParams({ temperature: 0 }), new Prng(1), []),
    ).to.equal(2);
  });
});

describe('processLogits', () => {
  it('should apply logit_bias, then the repetition penalty over prompt and output and frequency / presence over the output (vLLM)', () => {
    const p = resolveSamplingParams({
      repetition_penalty: 2,
      frequency_penalty: 0.5,
      presence_penalty: 0.25,
      logit_bias: { 4: 10 },
    });
    const state = new PenaltyState(2);
    // Prompt [0, 1]; output [2, 2, 1].
    state.update([0, 1, 2, 2, 1]);
    const l = Float32Array.from([4, -4, 6, 1, 0, 3]);
    processLogits(l, p, [5], state);
    // 0: prompt only → 4/2. 1: prompt and output once → -4×2 − 0.5 − 0.25. 2: output twice → 6/2 − 1 − 0.25.
    // 3: unseen. 4: bias +10, unseen. 5: banned.
    expect([...l]).to.deep.equal([2, -8.75, 1.75, 1, 10, -Infinity]);
  });

  it("should keep a tiny repetition_penalty's logits finite, so sampling picks among the seen ids with a positive logit (it picked the last id, PAD, every step)", () => {
    const p = resolveSamplingParams({ repetition_penalty: 1e-300, temperature: 1 });
    const state = new PenaltyState(3);
    state.update([0, 1, 2]);
    const l = Float32Array.from([4, -4, 6, 1]);
    processLogits(l, p, [], state);
    expect([...l]).to.deep.equal([3.4028234663852886e38, -0, 3.4028234663852886e38, 1]);
    const picks = Array.from({ length: 12 }, (_v, seed) => sampleToken(Float32Array.from(l), p, new Prng(seed), []));
    expect(picks).to.deep.equal([0, 2, 2, 2, 2, 2, 2, 0, 0, 0, 2, 2]);
    // Two ids share the mass: each at log(1/2), the others at 0 probability (the floor).
    expect(tokenLogprobs(l, 2, 4)).to.deep.equal({
      id: 2,
      logprob: -Math.LN2,
      top: [
        { id: 0, logprob: -Math.LN2 },
        { id: 2, logprob: -Math.LN2 },
        { id: 3, logprob: -9999 },
        { id: 1, logprob: -9999 },
      ],
    });
  });

  it('should keep a banned id that was seen at -Infinity under a repetition_penalty (the overflow clamp made it -3.4e38: a candidate again, listed in top logprobs)', () => {
    const state = new PenaltyState(3);
    state.update([0, 1, 2]);
    // rp 1e-300: ids 0 and 2 tie at the clamp (the first wins the tie).
    for (const [rp, top] of [
      [2, [2, 0, 3]],
      [1e-300, [0, 2, 3]],
    ] as const) {
      const l = Float32Array.from([4, -4, 6, 1]);
      processLogits(l, resolveSamplingParams({ repetition_penalty: rp }), [1], state);
      expect([l[1], tokenLogprobs(l, 2, 4).top.map((t) => t.id)], String(rp)).to.deep.equal([-Infinity, top]);
    }
  });

  it('should fold several appended tokens at once', () => {
    const s = new PenaltyState(1);
    s.update([7, 3]);
    s.update([7, 3, 3, 9]);
    expect([...s.outputCounts]).to.deep.equal([
      [3, 2],
      [9, 1],
    ]);
    expect([...s.seen].sort()).to.deep.equal([3, 7, 9]);
  });
});

describe('tokenLogprobs', () => {
  it('should give the log-softmax of the chosen id and the k best, -Infinity as -9999', () => {
    const l = Float32Array.from([Math.log(0.5), Math.log(0.3), Math.log(0.2), -Infinity]);
    const r = tokenLogprobs(l, 1, 2);
    expect(r.id).to.equal(1);
    expect(r.logprob).to.be.closeTo(Math.log(0.3), 1e-6);
    expect(r.top.map((t) => t.id)).to.deep.equal([0, 1]);
    expect(r.top[0]!.logprob).to.be.closeTo(Math.log(0.5), 1e-6);
    expect(tokenLogprobs(l, 3, 0)).to.deep.equal({ id: 3, logprob: -9999, top: [] });
  });
});
