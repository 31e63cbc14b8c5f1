import { expect } from 'chai';
import { modelVocab } from '../../../frontend/generation/model-vocab.js';
import type { ModelVocab } from '../../../frontend/generation/model-vocab.js';
import { parseCompletionRequest } from '../../../frontend/openai/params.js';
import { readyPrompts } from '../../../frontend/openai/request-prompts.js';
import { encode as gpt2Encode } from 'gpt-3-encoder';
import { NO_CHAT_TEMPLATE } from '../../../frontend/generation/chat-template.js';
import { tokenizerVocab } from '../../../frontend/generation/model-vocab.js';
import { ModelTokenizer } from '../../../schema/text/model-tokenizer.js';
import { gpt2TokenizerConfig, gpt2TokenizerJson } from '../../../tools/models/gpt2-tokenizer.js';

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

  describe('with a real tokenizer (GPT-2)', () => {
    let gpt2: ModelVocab;
    before(() => {
      const tk = new ModelTokenizer({
        tokenizerJson: gpt2TokenizerJson(),
        tokenizerConfig: gpt2TokenizerConfig(64),
        specialTokensMap: {},
        chatTemplate: undefined,
      });
      gpt2 = tokenizerVocab({ vocabSize: 50257, eosTokenId: 50256, maxModelLen: 64 }, tk, NO_CHAT_TEMPLATE);
    });

    it('should count and encode a prompt as GPT-2 does, max_tokens defaulted to what is left', () => {
      const [r] = readyPrompts(parseCompletionRequest({ model: 'm', prompt: 'Hello world', max_tokens: 5 }), gpt2);
      expect(r).to.deep.equal({ ids: [15496, 995], text: 'Hello world', maxTokens: 5 });
      expect(gpt2.count('café 日本')).to.equal(gpt2Encode('café 日本').length);
    });

    it('should refuse a huge prompt counted in pieces of 16 characters per max_model_len token, stopping at max_model_len, never encoding it whole', () => {
      const text = 'hello '.repeat(200_000);
      const p = parseCompletionRequest({ model: 'm', prompt: text });
      // The first 1024-character piece alone holds more than 64 tokens: the count stops there.
      const n = gpt2Encode(text.slice(0, 16 * 64)).length;
      expect(() => readyPrompts(p, countOnly(gpt2))).to.throw(
        `This model's maximum context length is 64 tokens. However, your request has ${n} input tokens. Please reduce the length of the input messages.`,
      );
    });
  });
});
