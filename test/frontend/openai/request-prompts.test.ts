import { expect } from 'chai';
import { modelVocab } from '../../../frontend/generation/model-vocab.js';
import type { ModelVocab } from '../../../frontend/generation/model-vocab.js';
import { parseCompletionRequest } from '../../../frontend/openai/params.js';
import { readyPrompts } from '../../../frontend/openai/request-prompts.js';

const ENGINE = { vocabSize: 259, bosTokenId: 256, eosTokenId: 257, maxModelLen: 16 };

/** The model's vocabulary, but encoding a prompt fails the test: what is refused by its count must not be encoded. */
function countOnly(v: ModelVocab): ModelVocab {
  return {
    ...v,
    encode: () => {
      throw new Error('encoded');
    },
  };
}

describe('readyPrompts', () => {
  it('should count a prompt as encode does, with and without the BOS, for non-ASCII text too', () => {
    const text = 'Grüße 日本';
    for (const engine of [ENGINE, { ...ENGINE, addBos: false }]) {
      const v = modelVocab(engine);
      expect(v.count(text)).to.equal(v.encode(text).length);
    }
    expect([modelVocab(ENGINE).count(text), modelVocab({ ...ENGINE, addBos: false }).count(text)]).to.deep.equal([
      15, 14,
    ]);
  });

  it('should refuse a prompt past max_model_len by its count, without encoding it (the ids of a 120 MB prompt took the heap past its limit)', () => {
    const p = parseCompletionRequest({ model: 'm', prompt: 'a'.repeat(1_000_000) });
    expect(() => readyPrompts(p, countOnly(modelVocab(ENGINE)))).to.throw(
      "This model's maximum context length is 16 tokens. However, your request has 1000001 input tokens. Please reduce the length of the input messages.",
    );
  });

  it('should still encode a prompt that fits, with max_tokens defaulted to what is left', () => {
    const [r] = readyPrompts(parseCompletionRequest({ model: 'm', prompt: 'Hi' }), modelVocab(ENGINE));
    expect(r).to.deep.equal({ ids: [256, 72, 105], text: 'Hi', maxTokens: 13 });
  });
});
