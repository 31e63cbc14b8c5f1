import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveEngineConfig } from '../../backend/engine/config.js';
import { loadModelConfig } from '../../frontend/store/model-config.js';
import { engineArgOfFlag, parseEngineArgText, validateEngineArgs } from '../../schema/engine-args.js';

/** MODEL in model-config.yaml, appended to a block (the lines above keep their numbers). */
const MODEL_YAML =
  '  vocab_size: 259\n  num_layers: 4\n  num_heads: 4\n  head_dim: 64\n  bos_token_id: 256\n  eos_token_id: 257\n  pad_token_id: 258\n';
const MODEL = {
  vocab_size: 259,
  num_layers: 4,
  num_heads: 4,
  head_dim: 64,
  bos_token_id: 256,
  eos_token_id: 257,
  pad_token_id: 258,
};

describe('speculative_config', () => {
  it("should take vLLM's shape and resolve it under our names", async () => {
    expect(
      validateEngineArgs({
        speculative_config: { method: 'ngram', num_speculative_tokens: 4, prompt_lookup_max: 3, prompt_lookup_min: 1 },
      }),
    ).to.deep.equal({
      args: { speculativeConfig: { method: 'ngram', numSpeculativeTokens: 4, promptLookupMax: 3, promptLookupMin: 1 } },
      problems: [],
    });
    expect(
      resolveEngineConfig({
        ...MODEL,
        speculativeConfig: { method: 'ngram', numSpeculativeTokens: 2, promptLookupMin: 2 },
      }).speculative,
    ).to.deep.equal({
      method: 'ngram',
      numSpeculativeTokens: 2,
      promptLookupMax: 2,
      promptLookupMin: 2,
    });
    expect(resolveEngineConfig(MODEL).speculative).to.equal(null);
  });

  it('should fill the lookup bounds as vLLM does: neither → 5 and 5, one → the other equals it', async () => {
    const bounds = (c: Record<string, unknown>): unknown => {
      const s = validateEngineArgs({ speculative_config: { method: 'ngram', num_speculative_tokens: 3, ...c } }).args
        .speculativeConfig as Record<string, unknown>;
      return [s.promptLookupMin, s.promptLookupMax];
    };
    expect(bounds({})).to.deep.equal([5, 5]);
    expect(bounds({ prompt_lookup_max: 4 })).to.deep.equal([4, 4]);
    expect(bounds({ prompt_lookup_min: 2 })).to.deep.equal([2, 2]);
  });

  it('should refuse bad keys and values, each with its path, value and did-you-mean', async () => {
    expect(
      validateEngineArgs({
        speculative_config: {
          method: 'eagle',
          num_speculative_token: 4,
          prompt_lookup_max: 0,
          promptLookupMin: 'two',
          zz: 1,
        },
      }).problems.map((p) => p.message),
    ).to.deep.equal([
      'engine.speculative_config.method: only "ngram" (prompt lookup) is supported, got "eagle"',
      'engine.speculative_config.num_speculative_token: unknown speculative_config key (value 4); did you mean "num_speculative_tokens"?',
      'engine.speculative_config.prompt_lookup_max: must be an integer >= 1, got 0',
      'engine.speculative_config.promptLookupMin: must be an integer >= 1, got "two"',
      'engine.speculative_config.zz: unknown speculative_config key (value 1); known keys: method, num_speculative_tokens, prompt_lookup_max, prompt_lookup_min',
      'engine.speculative_config.num_speculative_tokens: required (drafts per step, an integer >= 1)',
    ]);
    expect(
      validateEngineArgs({
        speculative_config: { num_speculative_tokens: 2, prompt_lookup_min: 4, prompt_lookup_max: 3 },
      }).problems.map((p) => p.message),
    ).to.deep.equal(['engine.speculative_config.method: required (the only method is "ngram")']);
    expect(
      validateEngineArgs({
        speculative_config: { method: 'ngram', num_speculative_tokens: 2, prompt_lookup_min: 4, prompt_lookup_max: 3 },
      }).problems.map((p) => p.message),
    ).to.deep.equal(['engine.speculative_config.prompt_lookup_min: 4 is greater than prompt_lookup_max 3']);
    expect(validateEngineArgs({ speculative_config: 'ngram' }).problems.map((p) => p.message)).to.deep.equal([
      'engine.speculative_config: must be a mapping {method: ngram, num_speculative_tokens, prompt_lookup_max, prompt_lookup_min}, got "ngram"',
    ]);
    expect(
      validateEngineArgs({
        speculative_config: { method: 'ngram', num_speculative_tokens: 2, numSpeculativeTokens: 3 },
      }).problems.map((p) => p.message),
    ).to.deep.equal([
      'engine.speculative_config.numSpeculativeTokens: 3 conflicts with engine.speculative_config.num_speculative_tokens: 2 (the same key spelled two ways)',
    ]);
  });

  it("should parse the --speculative-config flag as JSON, as vLLM's CLI does", async () => {
    const def = engineArgOfFlag('speculative-config')!;
    expect(def.name).to.equal('speculativeConfig');
    expect(parseEngineArgText(def, '{"method":"ngram","num_speculative_tokens":3}')).to.deep.equal({
      method: 'ngram',
      num_speculative_tokens: 3,
    });
    expect(parseEngineArgText(def, 'ngram')).to.equal('ngram');
  });

  describe('in model-config.yaml', () => {
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-spec-config-'));
      fs.writeFileSync(path.join(dir, 'model.onnx'), 'x');
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('should hand the worker the resolved config, and stop the load on a bad key at its line', async () => {
      const f = path.join(dir, 'model-config.yaml');
      fs.writeFileSync(
        f,
        `handler: generate\nmodel: model.onnx\nengine:\n  speculative_config:\n    method: ngram\n    num_speculative_tokens: 4\n    prompt_lookup_max: 3\n${MODEL_YAML}`,
      );
      const ok = await loadModelConfig('m', dir);
      expect(ok.ok && ok.config.engine).to.deep.equal({
        speculativeConfig: { method: 'ngram', numSpeculativeTokens: 4, promptLookupMax: 3, promptLookupMin: 3 },
        vocabSize: 259,
        numLayers: 4,
        numHeads: 4,
        headDim: 64,
        bosTokenId: 256,
        eosTokenId: 257,
        padTokenId: 258,
      });
      fs.writeFileSync(
        f,
        `handler: generate\nmodel: model.onnx\nengine:\n  speculative_config:\n    method: ngram\n    num_speculative_tokens: 4\n    prompt_lookup_mx: 3\n${MODEL_YAML}`,
      );
      // The location is the speculative_config mapping (problems are located by engine key).
      expect(await loadModelConfig('m', dir)).to.deep.equal({
        ok: false,
        problems: [
          `${f}:5:5: engine.speculative_config.prompt_lookup_mx: unknown speculative_config key (value 3); did you mean "prompt_lookup_max"?`,
        ],
      });
    });
  });
});
