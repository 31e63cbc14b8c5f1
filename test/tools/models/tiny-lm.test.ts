import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSession } from '../../../backend/onnx/ort.js';
import type { OrtSession } from '../../../backend/onnx/ort.js';
import { writeTinyLm } from '../../../tools/models/tiny-lm.js';
import { BOS_ID, EOS_ID, NUM_LAYERS, VOCAB_SIZE } from '../../../tools/models/tiny-lm-spec.js';
import { appendKv, argmax, emptyCache, maxAbsDiff, runFast, runHf } from './lm-harness.js';
import type { RowCache } from './lm-harness.js';

const TOL = 1e-4;

function bytes(text: string): number[] {
  return [BOS_ID, ...Buffer.from(text, 'utf8')];
}

function cacheDiff(a: RowCache, b: RowCache): number {
  let m = 0;
  for (let l = 0; l < NUM_LAYERS; l++)
    m = Math.max(m, maxAbsDiff(a.keys[l]!, b.keys[l]!), maxAbsDiff(a.values[l]!, b.values[l]!));
  return m;
}

describe('tools/models/tiny-lm', function () {
  let dir: string;
  let fast: OrtSession;
  let hf: OrtSession;
  const prompt = bytes('Hello, tiny world!');
  const k = 5;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsserve-tinylm-'));
    fast = await createSession(writeTinyLm(join(dir, 'fast'), { layout: 'fast' }));
    hf = await createSession(writeTinyLm(join(dir, 'hf'), { layout: 'hf' }));
  });

  after(async () => {
    await fast?.release();
    await hf?.release();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should declare the fast layout inputs and outputs in order', () => {
    expect(fast.inputNames).to.deep.equal([
      'input_ids',
      'position_ids',
      'attn_bias',
      'past_key.0',
      'past_value.0',
      'past_key.1',
      'past_value.1',
      'past_key.2',
      'past_value.2',
      'past_key.3',
      'past_value.3',
      'num_logits',
    ]);
    expect(fast.outputNames).to.deep.equal([
      'new_key.0',
      'new_value.0',
      'new_key.1',
      'new_value.1',
      'new_key.2',
      'new_value.2',
      'new_key.3',
      'new_value.3',
      'logits',
    ]);
  });

  it('should declare the usual exported layout inputs and outputs in order', () => {
    expect(hf.inputNames).to.deep.equal([
      'input_ids',
      'attention_mask',
      'position_ids',
      'past_key_values.0.key',
      'past_key_values.0.value',
      'past_key_values.1.key',
      'past_key_values.1.value',
      'past_key_values.2.key',
      'past_key_values.2.value',
      'past_key_values.3.key',
      'past_key_values.3.value',
    ]);
    expect(hf.outputNames).to.deep.equal([
      'present.0.key',
      'present.0.value',
      'present.1.key',
      'present.1.value',
      'present.2.key',
      'present.2.value',
      'present.3.key',
      'present.3.value',
      'logits',
    ]);
  });

  it('should match full no-cache runs when prefilling k tokens then stepping one token at a time (fast)', async () => {
    const cache = emptyCache();
    const pre = await runFast(fast, [prompt.slice(0, k)], [cache]);
    appendKv(cache, pre.newK, pre.newV, k);
    let worst = maxAbsDiff(pre.logits[0]!, (await runFast(fast, [prompt.slice(0, k)], [emptyCache()])).logits[0]!);
    for (let t = k; t < prompt.length; t++) {
      const step = await runFast(fast, [[prompt[t]!]], [cache]);
      appendKv(cache, step.newK, step.newV, 1);
      const full = await runFast(fast, [prompt.slice(0, t + 1)], [emptyCache()]);
      expect(full.logits[0]!.length).to.equal(VOCAB_SIZE);
      worst = Math.max(worst, maxAbsDiff(step.logits[0]!, full.logits[0]!));
    }
    const fullCache = emptyCache();
    const full = await runFast(fast, [prompt], [fullCache]);
    appendKv(fullCache, full.newK, full.newV, prompt.length);
    expect(cache.len).to.equal(prompt.length);
    expect(worst).to.be.below(TOL);
    expect(cacheDiff(cache, fullCache)).to.be.below(TOL);
  });

  it('should match full no-cache runs when prefilling k tokens then stepping with present fed back (hf)', async () => {
    const full = await runHf(hf, [prompt], [emptyCache()]);
    const at = (pos: number): Float32Array => full.logits[0]!.subarray(pos * VOCAB_SIZE, (pos + 1) * VOCAB_SIZE);
    const cache = emptyCache();
    const pre = await runHf(hf, [prompt.slice(0, k)], [cache]);
    appendKv(cache, pre.newK, pre.newV, k);
    let worst = maxAbsDiff(pre.logits[0]!, full.logits[0]!.slice(0, k * VOCAB_SIZE));
    for (let t = k; t < prompt.length; t++) {
      const step = await runHf(hf, [[prompt[t]!]], [cache]);
      // present = past ++ new, exactly: the first t slots are the past we fed in.
      expect(maxAbsDiff(step.presentK![0]!.subarray(0, t * 64), cache.keys[0]!.subarray(0, t * 64))).to.equal(0);
      appendKv(cache, step.newK, step.newV, 1);
      worst = Math.max(worst, maxAbsDiff(step.logits[0]!, at(t)));
    }
    expect(worst).to.be.below(TOL);
  });

  it('should give the same last-position logits and K/V in both layouts (same weights)', async () => {
    const a = await runFast(fast, [prompt], [emptyCache()]);
    const b = await runHf(hf, [prompt], [emptyCache()]);
    const last = b.logits[0]!.subarray((prompt.length - 1) * VOCAB_SIZE);
    expect(maxAbsDiff(a.logits[0]!, last)).to.be.below(TOL);
    for (let l = 0; l < NUM_LAYERS; l++) expect(maxAbsDiff(a.newK[l]!, b.newK[l]!)).to.be.below(TOL);
  });

  async function prefilled(run: typeof runFast, s: OrtSession, tokens: number[]): Promise<RowCache> {
    const c = emptyCache();
    const r = await run(s, [tokens], [c]);
    appendKv(c, r.newK, r.newV, tokens.length);
    return c;
  }

  for (const [name, run, which] of [
    ['fast', runFast, 'fast'],
    ['hf', runHf, 'hf'],
  ] as const) {
    it(`should give each row of a batch with different past lengths the logits it gets alone (${name}, masked)`, async () => {
      const s = which === 'fast' ? fast : hf;
      const a = bytes('short');
      const b = bytes('a longer past');
      const ca = await prefilled(run, s, a);
      const cb = await prefilled(run, s, b);
      expect([ca.len, cb.len]).to.deep.equal([6, 14]);
      const next = [
        [120, 121],
        [65, 66],
      ];
      const batch = await run(s, next, [ca, cb]);
      const aloneA = await run(s, [next[0]!], [ca]);
      const aloneB = await run(s, [next[1]!], [cb]);
      expect(maxAbsDiff(batch.logits[0]!, aloneA.logits[0]!)).to.be.below(TOL);
      expect(maxAbsDiff(batch.logits[1]!, aloneB.logits[0]!)).to.be.below(TOL);
      const half = batch.newK[0]!.length / 2;
      expect(maxAbsDiff(batch.newK[3]!.subarray(0, half), aloneA.newK[3]!)).to.be.below(TOL);
      expect(maxAbsDiff(batch.newV[3]!.subarray(half), aloneB.newV[3]!)).to.be.below(TOL);
    });
  }

  it('should give a left-padded row of a mixed prefill/decode batch the logits it gets alone (fast)', async () => {
    const ca = await prefilled(runFast, fast, bytes('abc'));
    const next = [[100], bytes('a fresh prompt in the same step')];
    const batch = await runFast(fast, next, [ca, emptyCache()]);
    const aloneA = await runFast(fast, [next[0]!], [ca]);
    const aloneB = await runFast(fast, [next[1]!], [emptyCache()]);
    expect(maxAbsDiff(batch.logits[0]!, aloneA.logits[0]!)).to.be.below(TOL);
    expect(maxAbsDiff(batch.logits[1]!, aloneB.logits[0]!)).to.be.below(TOL);
  });

  it('should decode greedily to a fixed, non-degenerate token sequence (seeded weights)', async () => {
    const cache = emptyCache();
    const tokens: number[] = [];
    let r = await runFast(fast, [bytes('Hello')], [cache]);
    appendKv(cache, r.newK, r.newV, 6);
    for (let i = 0; i < 16; i++) {
      const next = argmax(r.logits[0]!);
      tokens.push(next);
      r = await runFast(fast, [[next]], [cache]);
      appendKv(cache, r.newK, r.newV, 1);
    }
    expect(tokens[0]).to.not.equal(EOS_ID);
    expect(new Set(tokens).size).to.be.at.least(6);
    expect(Buffer.from(tokens).toString('latin1')).to.equal('Iz;idz;jfaz8fjfj');
  });
});
