/**
 * vLLM's corrupted requests (`VLLM_COMPUTE_NANS_IN_LOGITS`): with `computeNansInLogits` the
 * engine scans every logits row the runner returns, at the sampler's boundary, and a sequence
 * whose row ever held a NaN finishes with `corrupted: true`. A NaN is never sampled, so such a
 * sequence goes on and finishes as it would have (the fake model's greedy tokens are the truth);
 * a row of NaN only leaves nothing to sample: `error`. Without the setting nothing is scanned.
 */
import { expect } from 'chai';
import type { GenRequestOutput } from '../../../schema/engine-ipc.js';
import { fakeGreedy } from './fake-runner.js';
import { drain, fakeEngine } from './harness.js';

const greedy = { temperature: 0, ignore_eos: true };
const ids = (text: string): number[] => [256, ...Buffer.from(text, 'utf8')];

/** The final output of every sequence, `requestId/index` → [finishReason, corrupted, generated tokens]. */
async function finals(engine: ReturnType<typeof fakeEngine>['engine']): Promise<Record<string, unknown[]>> {
  const tokens = new Map<string, number[]>();
  const out: Record<string, unknown[]> = {};
  for (const step of await drain(engine)) {
    for (const o of step.outputs as GenRequestOutput[]) {
      const k = `${o.requestId}/${o.index}`;
      tokens.set(k, [...(tokens.get(k) ?? []), ...o.newTokenIds]);
      if (o.finishReason !== undefined) out[k] = [o.finishReason, o.corrupted ?? false, tokens.get(k)];
    }
  }
  return out;
}

describe('Corrupted requests (NaN in logits, computeNansInLogits)', () => {
  it('should flag exactly the sequence whose row held one NaN, once, and let it finish by length with its greedy tokens', async () => {
    const { engine, runner } = fakeEngine({ computeNansInLogits: true });
    engine.addRequest('a', ids('alpha'), { ...greedy, max_tokens: 4 });
    engine.addRequest('b', ids('beta'), { ...greedy, max_tokens: 4 });
    engine.addRequest('c', ids('gamma'), { ...greedy, max_tokens: 4 });
    await engine.step();
    // Sequence 1 (request b): NaN at id 0 in its second row, and again in its third.
    runner.nanAtNext.set(1, 0);
    await engine.step();
    runner.nanAtNext.set(1, 97);
    // 97 ('a') is not b's third greedy token, so the NaN there changes no pick.
    expect(fakeGreedy(ids('beta'), 4)[2]).to.not.equal(97);
    const rest = await finals(engine);
    expect(rest).to.deep.equal({
      'a/0': ['length', false, fakeGreedy(ids('alpha'), 4).slice(2)],
      // NaN never wins the argmax: the tokens are those of the rows without it.
      'b/0': ['length', true, fakeGreedy(ids('beta'), 4).slice(2)],
      'c/0': ['length', false, fakeGreedy(ids('gamma'), 4).slice(2)],
    });
  });

  it('should flag a sequence whose whole row was NaN and finish it with error, the others going on unflagged', async () => {
    const { engine, runner } = fakeEngine({ computeNansInLogits: true });
    engine.addRequest('ok', ids('fine'), { ...greedy, max_tokens: 3 });
    engine.addRequest('nan', ids('doomed'), { ...greedy, max_tokens: 3 });
    await engine.step();
    runner.nanNext.add(1);
    expect(await finals(engine)).to.deep.equal({
      'nan/0': ['error', true, []],
      'ok/0': ['length', false, fakeGreedy(ids('fine'), 3).slice(1)],
    });
  });

  it('should flag each child of an n=2 request on its own (vLLM counts each finished engine request)', async () => {
    const { engine, runner } = fakeEngine({ computeNansInLogits: true });
    engine.addRequest('p', ids('pair'), { ...greedy, max_tokens: 2, n: 2 });
    runner.nanAtNext.set(0, 5);
    const f = await finals(engine);
    expect([f['p/0']![1], f['p/1']![1]]).to.deep.equal([true, false]);
  });

  it('should not scan without computeNansInLogits: the same NaN flags nothing', async () => {
    const { engine, runner } = fakeEngine();
    engine.addRequest('b', ids('beta'), { ...greedy, max_tokens: 4 });
    await engine.step();
    runner.nanAtNext.set(0, 0);
    expect(await finals(engine)).to.deep.equal({
      'b/0': ['length', false, fakeGreedy(ids('beta'), 4).slice(1)],
    });
  });
});
