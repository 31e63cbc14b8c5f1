import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { EngineCore } from '../../../backend/engine/engine-core.js';
import { loadEngine, readModelDir } from '../../../backend/engine/load.js';
import { NgramProposer } from '../../../backend/engine/ngram-proposer.js';
import type { RunItem, RunResult } from '../../../backend/engine/runner.js';
import type { EngineCoreOutputs, GenSamplingParams, SpecDecodingStats } from '../../../schema/engine-ipc.js';
import { collect, drain } from './harness.js';
import { createSession } from '../../../backend/onnx/ort.js';
import { VOCAB_SIZE } from '../../../tools/models/tiny-lm-spec.js';
import { fullRunLogits, promptIds, writeModels } from './real-harness.js';

const ngram = (k: number, max: number, min: number): NgramProposer =>
  new NgramProposer({ method: 'ngram', numSpeculativeTokens: k, promptLookupMax: max, promptLookupMin: min });

describe('NgramProposer', () => {
  it('should propose the tokens after the earliest occurrence of the longest suffix n-gram', () => {
    // Suffix 3-gram [1,2,3] occurs at 0 and 4; the earliest wins: [9, 1], not [7, 5].
    expect(ngram(2, 3, 1).propose([1, 2, 3, 9, 1, 2, 3, 7, 5, 1, 2, 3], 2)).to.deep.equal([9, 1]);
    // Only the 1-gram [3] repeats: the tokens after its first occurrence.
    expect(ngram(3, 3, 1).propose([3, 4, 5, 6, 3], 3)).to.deep.equal([4, 5, 6]);
    // The longest n wins over an earlier shorter match: [7,3] occurs at 3, [3] alone at 0.
    expect(ngram(2, 2, 1).propose([3, 1, 0, 7, 3, 8, 7, 3], 2)).to.deep.equal([8, 7]);
  });

  it('should stop at k and at the end of the context (a short cycle runs into the suffix)', () => {
    expect(ngram(5, 2, 2).propose([1, 2, 1, 2], 5)).to.deep.equal([1, 2]);
    expect(ngram(5, 2, 2).propose([1, 2, 1, 2, 1, 2], 1)).to.deep.equal([1]);
  });

  it('should propose nothing when no suffix n-gram of at least prompt_lookup_min tokens repeats, or for k = 0', () => {
    expect(ngram(4, 3, 2).propose([1, 2, 3, 4, 5, 1], 4)).to.deep.equal([]);
    expect(ngram(4, 3, 1).propose([1, 2, 3, 4, 5], 4)).to.deep.equal([]);
    expect(ngram(4, 3, 1).propose([1, 2, 1], 0)).to.deep.equal([]);
  });
});

/** The runner's items with drafts (numLogits > 1), per step. */
type VerifyLog = { count: number; numLogits: number }[][];

describe('speculative decoding on the real tiny LM', function () {
  let root: string;
  let dirs: { fast: string; hf: string };
  const engines: EngineCore[] = [];
  /** BOS + "qld z" + its first 80 greedy tokens: the continuation is mostly a "bt" cycle. */
  let repetitive: number[];
  const SPEC = { method: 'ngram', num_speculative_tokens: 4, prompt_lookup_max: 3, prompt_lookup_min: 1 };
  const greedy: GenSamplingParams = { temperature: 0, ignore_eos: true };

  async function engine(dir: string, overrides: Record<string, unknown> = {}): Promise<EngineCore> {
    const m = await readModelDir(dir);
    const e = await loadEngine({ dir, modelFile: m.modelFile, engine: m.engine, overrides });
    engines.push(e);
    return e;
  }

  /** Records every verify item the runner is given. */
  function spy(e: EngineCore): VerifyLog {
    const log: VerifyLog = [];
    const runner = e.runner as { run(items: readonly RunItem[]): Promise<RunResult[]> };
    const run = runner.run.bind(runner);
    runner.run = (items) => {
      log.push(
        items.filter((it) => (it.numLogits ?? 1) > 1).map((it) => ({ count: it.count, numLogits: it.numLogits! })),
      );
      return run(items);
    };
    return log;
  }

  function specTotals(steps: readonly EngineCoreOutputs[]): SpecDecodingStats {
    const t = { numDrafts: 0, numDraftTokens: 0, numAcceptedTokens: 0, numAcceptedTokensPerPos: [0, 0, 0, 0] };
    for (const s of steps) {
      const d = s.stats?.specDecoding;
      if (d === undefined) continue;
      t.numDrafts += d.numDrafts;
      t.numDraftTokens += d.numDraftTokens;
      t.numAcceptedTokens += d.numAcceptedTokens;
      d.numAcceptedTokensPerPos.forEach((n, i) => (t.numAcceptedTokensPerPos[i]! += n));
    }
    return t;
  }

  async function tokensOf(
    e: EngineCore,
    prompt: string | number[],
    params: GenSamplingParams,
  ): Promise<{
    tokens: number[];
    text: string;
    finishReason?: string;
    stopReason?: string | number;
    steps: EngineCoreOutputs[];
  }> {
    e.addRequest('r', prompt, params);
    const steps = await drain(e);
    const r = collect(steps).get('r/0')!;
    return { tokens: r.tokens, text: r.text, finishReason: r.finishReason, stopReason: r.stopReason, steps };
  }

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'tsserve-spec-'));
    dirs = await writeModels(root);
    const plain = await engine(dirs.fast);
    repetitive = [...promptIds('qld z'), ...(await tokensOf(plain, 'qld z', { ...greedy, max_tokens: 80 })).tokens];
  });

  after(async () => {
    for (const e of engines) await e.runner.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('should give exactly the greedy tokens of plain decoding on a repetitive prompt, with drafts accepted, and counters that add up', async () => {
    const want = await tokensOf(await engine(dirs.fast), repetitive, { ...greedy, max_tokens: 64 });
    const e = await engine(dirs.fast, { speculative_config: SPEC });
    const log = spy(e);
    const got = await tokensOf(e, repetitive, { ...greedy, max_tokens: 64 });
    expect(got.tokens).to.deep.equal(want.tokens);
    expect(got.text).to.equal(want.text);
    expect(got.finishReason).to.equal('length');
    const t = specTotals(got.steps);
    const verifies = log.flat();
    expect(t.numAcceptedTokens).to.be.greaterThan(0);
    expect(t.numAcceptedTokens).to.be.at.most(t.numDraftTokens);
    expect(t.numAcceptedTokensPerPos.reduce((a, b) => a + b, 0)).to.equal(t.numAcceptedTokens);
    // Each position's acceptances are at most the previous one's (a draft is accepted only after its predecessors).
    for (let i = 1; i < 4; i++) expect(t.numAcceptedTokensPerPos[i]!).to.be.at.most(t.numAcceptedTokensPerPos[i - 1]!);
    expect(t.numDrafts).to.equal(verifies.length);
    expect(t.numDraftTokens).to.equal(verifies.reduce((n, v) => n + v.numLogits - 1, 0));
    // Every output carries 1 token plus the drafts its verify accepted.
    const outputs = got.steps.flatMap((s) => s.outputs).filter((o) => o.newTokenIds.length > 0);
    expect(got.tokens.length).to.equal(outputs.length + t.numAcceptedTokens);
    expect(got.steps.reduce((n, s) => n + s.numGenerationTokens, 0)).to.equal(64);
  });

  it('should give exactly the seeded sampled tokens of plain decoding (same PRNG draws, one per emitted token)', async () => {
    const params: GenSamplingParams = { temperature: 0.7, top_k: 20, seed: 11, ignore_eos: true, max_tokens: 48 };
    const want = await tokensOf(await engine(dirs.fast), repetitive, params);
    const e = await engine(dirs.fast, { speculative_config: SPEC });
    const got = await tokensOf(e, repetitive, params);
    expect(got.tokens).to.deep.equal(want.tokens);
    expect(specTotals(got.steps).numDrafts).to.be.greaterThan(0);
  });

  it('should apply stop token ids, min_tokens, stop strings and EOS per emitted token as plain decoding does', async () => {
    const plainRun = await tokensOf(await engine(dirs.fast), repetitive, { ...greedy, max_tokens: 40 });
    // A token that first appears after 10 outputs, stopping inside an accepted run of drafts.
    const stopId = plainRun.tokens.find((t, i) => i >= 10 && plainRun.tokens.indexOf(t) < i)!;
    const cases: GenSamplingParams[] = [
      { ...greedy, max_tokens: 40, stop_token_ids: [stopId] },
      { ...greedy, max_tokens: 40, stop_token_ids: [stopId], min_tokens: 20 },
      { ...greedy, max_tokens: 40, stop: ['tbtb'] },
      { temperature: 0, max_tokens: 40 },
      { ...greedy, max_tokens: 7 },
    ];
    for (const params of cases) {
      const want = await tokensOf(await engine(dirs.fast), repetitive, params);
      const got = await tokensOf(await engine(dirs.fast, { speculative_config: SPEC }), repetitive, params);
      expect(
        { tokens: got.tokens, text: got.text, finishReason: got.finishReason, stopReason: got.stopReason },
        JSON.stringify(params),
      ).to.deep.equal({
        tokens: want.tokens,
        text: want.text,
        finishReason: want.finishReason,
        stopReason: want.stopReason,
      });
    }
  });

  it('should propose nothing on a prompt with no repeats (no verify runs, zero counters)', async () => {
    const e = await engine(dirs.fast, {
      speculative_config: { method: 'ngram', num_speculative_tokens: 4, prompt_lookup_max: 4, prompt_lookup_min: 2 },
    });
    const log = spy(e);
    const got = await tokensOf(e, 'The quick brown fox', { ...greedy, max_tokens: 6 });
    expect(got.tokens.length).to.equal(6);
    expect(log.flat()).to.deep.equal([]);
    expect(specTotals(got.steps)).to.deep.equal({
      numDrafts: 0,
      numDraftTokens: 0,
      numAcceptedTokens: 0,
      numAcceptedTokensPerPos: [0, 0, 0, 0],
    });
  });

  it('should give back rejected slots: after every step the blocks cover the computed positions, as in plain decoding', async () => {
    const usage = async (e: EngineCore): Promise<Map<number, number>> => {
      const byComputed = new Map<number, number>();
      e.addRequest('r', repetitive, { ...greedy, max_tokens: 60 });
      while (e.hasWork()) {
        await e.step();
        const seq = e.scheduler.running[0];
        if (seq === undefined) continue;
        expect(seq.blockTable.length).to.equal(Math.ceil(seq.numComputed / 4));
        byComputed.set(seq.numComputed, e.kv.pool.numUsed);
      }
      expect(e.kv.pool.numUsed).to.equal(0);
      return byComputed;
    };
    const plain = await usage(await engine(dirs.fast, { block_size: 4 }));
    const spec = await usage(await engine(dirs.fast, { block_size: 4, speculative_config: SPEC }));
    let compared = 0;
    for (const [computed, used] of spec) {
      if (!plain.has(computed)) continue;
      expect(used, `at ${computed} computed positions`).to.equal(plain.get(computed));
      compared++;
    }
    expect(compared).to.be.greaterThan(5);
  });

  it("should give, with num_logits N, the last N positions' logits of one run, each equal to that prefix's own last logits", async () => {
    const s = await createSession(join(dirs.fast, 'model.onnx'));
    try {
      const tokens = promptIds('Hello there');
      const T = tokens.length;
      const all = await fullRunLogits(s, tokens, 4); // [1, 4, vocab] is checked there
      for (let j = 0; j < 4; j++) {
        const alone = await fullRunLogits(s, tokens.slice(0, T - 3 + j));
        let worst = 0;
        for (let v = 0; v < VOCAB_SIZE; v++) worst = Math.max(worst, Math.abs(all[j * VOCAB_SIZE + v]! - alone[v]!));
        expect(worst, `position ${T - 4 + j}`).to.be.below(1e-4);
      }
    } finally {
      await s.release();
    }
  });

  it('should refuse speculative_config with a runner that returns one position of logits (the hf layout)', async () => {
    const m = await readModelDir(dirs.hf);
    const refusal = async (overrides: Record<string, unknown>): Promise<string> => {
      try {
        await loadEngine({ dir: dirs.hf, modelFile: m.modelFile, engine: m.engine, overrides });
      } catch (e) {
        return (e as Error).message;
      }
      return 'loaded';
    };
    // layout: hf as written: the settings alone say no (the frontend's config check says it first).
    expect(await refusal({ speculative_config: SPEC })).to.equal(
      'invalid engine settings:\n  engine.speculative_config: n-gram speculative decoding needs logits for several positions, which the hf layout (engine.layout) does not return; remove speculative_config, or serve a fast-layout model with a num_logits input (tsserve models generate)',
    );
    // layout: auto: only the graph tells, so the engine's own check is the backstop.
    expect(await refusal({ layout: 'auto', speculative_config: SPEC })).to.equal(
      'speculative_config (ngram) needs a model that returns logits for several positions: the fast KV layout with a num_logits input (regenerate tiny-lm with `tsserve models generate`)',
    );
  });
});

describe('tsserve generate --speculative-config', function () {
  const run = promisify(execFile);
  const BIN = resolve(import.meta.dirname, '../../../../bin/tsserve.js');
  let root: string;
  let model: string;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'tsserve-cli-spec-'));
    model = (await writeModels(root)).fast;
  });

  after(() => rmSync(root, { recursive: true, force: true }));

  it("should take vLLM's JSON flag, print the plain run's output, and refuse a bad key with a did-you-mean", async () => {
    const input = join(root, 'in.jsonl');
    writeFileSync(input, '{"prompt":"abcabcabcabcabc","max_tokens":12,"temperature":0,"ignore_eos":true}\n');
    const plain = await run(process.execPath, [BIN, 'generate', '--model', model, '--input', input]);
    const spec = await run(process.execPath, [
      BIN,
      'generate',
      '--model',
      model,
      '--input',
      input,
      '--speculative-config',
      '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":3}',
    ]);
    expect(spec.stdout).to.equal(plain.stdout);
    const err = await run(process.execPath, [
      BIN,
      'generate',
      '--model',
      model,
      '--input',
      input,
      '--speculative-config',
      '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_mx":3}',
    ]).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).to.equal(2);
    expect(err?.stderr).to.equal(
      'tsserve generate: --speculative_config.prompt_lookup_mx: unknown speculative_config key (value 3); did you mean "prompt_lookup_max"?\n',
    );
  });
});
