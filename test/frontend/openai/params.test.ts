import { expect } from 'chai';
import { ChatTemplate } from '../../../frontend/generation/chat-template.js';
import { BYTE_CHAT_TEMPLATE } from '../../../tools/models/demo-models.js';
import { OpenAIError } from '../../../frontend/http/openai-errors.js';
import { modelVocab } from '../../../frontend/generation/model-vocab.js';
import { parseChatRequest, parseCompletionRequest } from '../../../frontend/openai/params.js';
import { readyPrompts } from '../../../frontend/openai/request-prompts.js';

function problem(f: () => unknown): { status: number; param: string | null; message: string } {
  try {
    f();
  } catch (e) {
    if (e instanceof OpenAIError) return { status: e.status, param: e.param, message: e.message };
    throw e;
  }
  throw new Error('expected an OpenAIError');
}

describe('OpenAI request params', () => {
  it('should map a completions body to engine params with the documented defaults', () => {
    const plain = { stream: false, includeUsage: false, continuousUsage: false, echo: false };
    expect(parseCompletionRequest({ model: 'tiny-lm', prompt: 'Hi' })).to.deep.equal({
      model: 'tiny-lm',
      prompts: ['Hi'],
      params: { n: 1 },
      maxTokens: undefined,
      defaultMaxTokens: 16,
      ...plain,
    });
    expect(
      parseCompletionRequest({
        model: 'm',
        prompt: ['x'],
        max_tokens: 5,
        temperature: 0,
        top_p: 0.5,
        top_k: 3,
        seed: 7,
        n: 2,
        stop: 'zz',
        ignore_eos: true,
        stream: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
        logprobs: 2,
        user: 'u1',
        min_p: 0.1,
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        repetition_penalty: 1.2,
        logit_bias: { 65: 500, 66: -3 },
        stop_token_ids: [10],
        min_tokens: 2,
        include_stop_str_in_output: true,
        echo: false,
      }),
    ).to.deep.equal({
      model: 'm',
      prompts: ['x'],
      maxTokens: 5,
      defaultMaxTokens: 16,
      stream: true,
      includeUsage: true,
      continuousUsage: true,
      echo: false,
      params: {
        n: 2,
        temperature: 0,
        top_p: 0.5,
        top_k: 3,
        min_p: 0.1,
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        repetition_penalty: 1.2,
        logit_bias: { 65: 100, 66: -3 },
        seed: 7,
        stop: ['zz'],
        stop_token_ids: [10],
        min_tokens: 2,
        ignore_eos: true,
        include_stop_str_in_output: true,
        logprobs: 2,
      },
    });
  });

  it('should reject bad params with 400 naming the parameter', () => {
    expect(problem(() => parseCompletionRequest({ prompt: 'x' }))).to.deep.equal({
      status: 400,
      param: 'model',
      message: 'model is required: the name of a served generation model (GET /v1/models)',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 3 }))).to.deep.equal({
      status: 400,
      param: 'prompt',
      message: 'prompt must be a string, a list of token ids, or a non-empty list of either',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', max_tokens: 0 }))).to.deep.equal({
      status: 400,
      param: 'max_tokens',
      message: 'max_tokens must be an integer between 1 and 9007199254740991, got 0',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', temperature: 3 }))).to.deep.equal({
      status: 400,
      param: 'temperature',
      message: 'temperature must be a number between 0 and 2, got 3',
    });
    // 1e309 in a JSON body parses to Infinity: the message says so, not "null".
    expect(
      problem(() => parseCompletionRequest(JSON.parse('{"model": "m", "prompt": "x", "temperature": 1e309}'))),
    ).to.deep.equal({
      status: 400,
      param: 'temperature',
      message: 'temperature must be a number between 0 and 2, got Infinity',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', stop: [''] }))).to.deep.equal({
      status: 400,
      param: 'stop',
      message: 'stop must be a non-empty string or a list of non-empty strings',
    });
    // Each stop string is searched for after every token: the list is bounded (it was not).
    const stops = (k: number): string[] => Array.from({ length: k }, (_v, i) => `s${i}`);
    expect(
      problem(() => parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], stop: stops(65) })),
    ).to.deep.equal({
      status: 400,
      param: 'stop',
      message: 'stop takes at most 64 strings, got 65',
    });
    expect(parseCompletionRequest({ model: 'm', prompt: 'x', stop: stops(64) }).params.stop).to.deep.equal(stops(64));
    expect(
      problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', stream_options: { include_usage: true } })),
    ).to.deep.equal({
      status: 400,
      param: 'stream_options',
      message: 'stream_options is only allowed when stream is true',
    });
    expect(problem(() => parseCompletionRequest([1]))).to.deep.equal({
      status: 400,
      param: null,
      message: 'the request body must be a JSON object',
    });
  });

  it('should refuse a seed past 2^53 - 1 naming seed and the range (a larger JSON number arrives rounded: two seeds would share a stream)', () => {
    const range =
      'seed must be an integer between 0 and 9007199254740991 (2^53 - 1, the largest a JSON number carries exactly)';
    expect(
      problem(() => parseCompletionRequest(JSON.parse('{"model": "m", "prompt": "x", "seed": 18446744073709551615}'))),
    ).to.deep.equal({
      status: 400,
      param: 'seed',
      message: `${range}, got 18446744073709552000`,
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', seed: 2 ** 53 }))).to.deep.equal({
      status: 400,
      param: 'seed',
      message: `${range}, got 9007199254740992`,
    });
    expect(
      problem(() => parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], seed: -1 })),
    ).to.deep.equal({
      status: 400,
      param: 'seed',
      message: `${range}, got -1`,
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', seed: '7' }))).to.deep.equal({
      status: 400,
      param: 'seed',
      message: `${range}, got "7"`,
    });
    expect(parseCompletionRequest({ model: 'm', prompt: 'x', seed: 2 ** 53 - 1 }).params).to.deep.equal({
      n: 1,
      seed: 9007199254740991,
    });
    expect(parseCompletionRequest({ model: 'm', prompt: 'x', seed: 2 ** 32 + 1 }).params).to.deep.equal({
      n: 1,
      seed: 4294967297,
    });
  });

  it('should accept a prompt of token ids, or a list of prompts, and check ids against the vocabulary', () => {
    const p = parseCompletionRequest({ model: 'm', prompt: [256, 72, 105] });
    expect(p.prompts).to.deep.equal([[256, 72, 105]]);
    expect(parseCompletionRequest({ model: 'm', prompt: [[256, 72]] }).prompts).to.deep.equal([[256, 72]]);
    expect(parseCompletionRequest({ model: 'm', prompt: ['a', [1, 2], 'b'] }).prompts).to.deep.equal([
      'a',
      [1, 2],
      'b',
    ]);
    const vocab = modelVocab({ vocabSize: 256, bosTokenId: 0, maxModelLen: 64 });
    expect(
      problem(() => readyPrompts(parseCompletionRequest({ model: 'm', prompt: ['a', [7, 256]] }), vocab)),
    ).to.deep.equal({
      status: 400,
      param: 'prompt',
      message: "prompt token id 256 at index 1 is outside the model's vocabulary (0..255)",
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: [] }))).to.deep.equal({
      status: 400,
      param: 'prompt',
      message: 'prompt must be a string, a list of token ids, or a non-empty list of either',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: ['a', ''] }))).to.deep.equal({
      status: 400,
      param: 'prompt',
      message: 'prompt[1] must not be empty',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: [1, 2.5] }))).to.deep.equal({
      status: 400,
      param: 'prompt',
      message: 'prompt token ids must be integers >= 0, got 2.5 at index 1',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: [3, -1] }))).to.deep.equal({
      status: 400,
      param: 'prompt',
      message: 'prompt token ids must be integers >= 0, got -1 at index 1',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: [1, 'a'] }))).to.deep.equal({
      status: 400,
      param: 'prompt',
      message: 'prompt must be a string, a list of token ids, or a list of either',
    });
  });

  it("should default completions' max_tokens to 16 as OpenAI and vLLM do (it was the whole rest of max_model_len), chat's to the rest", () => {
    const big = modelVocab({ vocabSize: 259, bosTokenId: 256, maxModelLen: 1024 });
    expect(readyPrompts(parseCompletionRequest({ model: 'm', prompt: 'Hello' }), big)[0]!.maxTokens).to.equal(16);
    expect(
      readyPrompts(parseCompletionRequest({ model: 'm', prompt: 'Hello', max_tokens: null }), big)[0]!.maxTokens,
    ).to.equal(16);
    expect(
      readyPrompts(parseCompletionRequest({ model: 'm', prompt: 'Hello', max_tokens: 100 }), big)[0]!.maxTokens,
    ).to.equal(100);
    expect(
      problem(() => readyPrompts(parseCompletionRequest({ model: 'm', prompt: 'Hello', min_tokens: 17 }), big)),
    ).to.deep.equal({
      status: 400,
      param: 'min_tokens',
      message: 'min_tokens (17) must be <= max_tokens (16, the default of /v1/completions)',
    });
  });

  it("should cap the default max_tokens to what is left of max_model_len and refuse an overflow with vLLM's messages", () => {
    const vocab = modelVocab({ vocab_size: 259, bos_token_id: 256, max_model_len: 10 });
    expect(readyPrompts(parseCompletionRequest({ model: 'm', prompt: ['Hi', 'Hello'] }), vocab)).to.deep.equal([
      { ids: [256, 72, 105], text: 'Hi', maxTokens: 7 },
      { ids: [256, 72, 101, 108, 108, 111], text: 'Hello', maxTokens: 4 },
    ]);
    expect(
      readyPrompts(
        parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }] }),
        modelVocab({ vocabSize: 259, bosTokenId: 256 }, new ChatTemplate(BYTE_CHAT_TEMPLATE)),
      )[0]!.maxTokens,
    ).to.equal(1024 - 19);
    expect(
      problem(() => readyPrompts(parseCompletionRequest({ model: 'm', prompt: 'Hello', max_tokens: 5 }), vocab)),
    ).to.deep.equal({
      status: 400,
      param: 'max_tokens',
      message:
        "'max_tokens' or 'max_completion_tokens' is too large: 5. This model's maximum context length is 10 tokens and your request has 6 input tokens (5 > 10 - 6).",
    });
    expect(
      problem(() => readyPrompts(parseCompletionRequest({ model: 'm', prompt: 'Hello, you' }), vocab)),
    ).to.deep.equal({
      status: 400,
      param: null,
      message:
        "This model's maximum context length is 10 tokens. However, your request has 11 input tokens. Please reduce the length of the input messages.",
    });
    // With max_tokens given too, as vLLM: the prompt alone is the problem (it was '(2 > 10 - 11)').
    for (const prompt of ['Hello, you', 'Hello, yo']) {
      expect(
        problem(() =>
          readyPrompts(parseCompletionRequest({ model: 'm', prompt: ['a', prompt], max_tokens: 2 }), vocab),
        ),
      ).to.deep.equal({
        status: 400,
        param: null,
        message: `This model's maximum context length is 10 tokens. However, your request has ${prompt.length + 1} input tokens. Please reduce the length of the input messages.`,
      });
    }
    expect(
      problem(() =>
        readyPrompts(parseCompletionRequest({ model: 'm', prompt: 'a', logit_bias: { 300: 1, 5: 1, 259: 2 } }), vocab),
      ),
    ).to.deep.equal({
      status: 400,
      param: 'logit_bias',
      message: 'token_id(s) [259, 300] in logit_bias contain out-of-vocab token ids. Vocabulary size: 259',
    });
    expect(
      problem(() => readyPrompts(parseCompletionRequest({ model: 'm', prompt: 'a', min_tokens: 9 }), vocab)),
    ).to.deep.equal({
      status: 400,
      param: 'min_tokens',
      message: 'min_tokens (9) must be <= max_tokens (8, what is left of max_model_len 10)',
    });
    expect(
      problem(() => readyPrompts(parseCompletionRequest({ model: 'm', prompt: 'a', stop_token_ids: [1, 400] }), vocab)),
    ).to.deep.equal({
      status: 400,
      param: 'stop_token_ids',
      message: "stop_token_ids token id 400 at index 1 is outside the model's vocabulary (0..258)",
    });
  });

  it('should refuse stop_token_ids that with the EOS and suppressed ids ban the whole vocabulary under min_tokens, before the engine (a stream had answered 200)', () => {
    // Ids 0..3: EOS 2 (a list), 3 suppressed; stop ids 0 and 1 leave nothing to sample.
    const vocab = modelVocab({ vocabSize: 4, bosTokenId: 0, addBos: false, eosTokenId: [2], suppressTokens: [3] });
    const body = { model: 'm', prompt: [1], max_tokens: 2, min_tokens: 1, stream: true };
    expect(
      problem(() => readyPrompts(parseCompletionRequest({ ...body, stop_token_ids: [1, 0, 1] }), vocab)),
    ).to.deep.equal({
      status: 400,
      param: 'stop_token_ids',
      message:
        "stop_token_ids with the model's EOS and suppressed ids cover all 4 token ids, so nothing could be sampled before min_tokens (1); leave at least one id out",
    });
    // One id left, or no min_tokens: the engine can sample.
    const ready = [{ ids: [1], text: '\u0001', maxTokens: 2 }];
    expect(readyPrompts(parseCompletionRequest({ ...body, stop_token_ids: [1] }), vocab)).to.deep.equal(ready);
    expect(
      readyPrompts(parseCompletionRequest({ ...body, min_tokens: 0, stop_token_ids: [0, 1] }), vocab),
    ).to.deep.equal(ready);
  });

  it('should refuse every field it does not implement by name, null counting as absent', () => {
    expect(
      problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', suffix: 'y', best_of: null })),
    ).to.deep.equal({
      status: 400,
      param: 'suffix',
      message: "Unsupported parameter: 'suffix' is not supported by this server.",
    });
    expect(
      problem(() =>
        parseChatRequest({
          model: 'm',
          messages: [{ role: 'user', content: 'x' }],
          tools: [],
          response_format: { type: 'json_object' },
        }),
      ),
    ).to.deep.equal({
      status: 400,
      param: 'tools',
      message: "Unsupported parameters: 'tools', 'response_format' are not supported by this server.",
    });
    expect(
      problem(() => parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x', name: 'bob' }] })),
    ).to.deep.equal({
      status: 400,
      param: 'messages[0].name',
      message: "Unsupported parameter: 'messages[0].name' is not supported by this server.",
    });
    expect(
      problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', stream: true, stream_options: { foo: 1 } })),
    ).to.deep.equal({
      status: 400,
      param: 'stream_options.foo',
      message: "Unsupported parameter: 'stream_options.foo' is not supported by this server.",
    });
    // A stream option is named by its path, as an unsupported one is (it was 'include_usage').
    expect(
      problem(() =>
        parseCompletionRequest({ model: 'm', prompt: 'x', stream: true, stream_options: { include_usage: 'yes' } }),
      ),
    ).to.deep.equal({
      status: 400,
      param: 'stream_options.include_usage',
      message: 'stream_options.include_usage must be true or false, got "yes"',
    });
    expect(
      problem(() =>
        parseChatRequest({
          model: 'm',
          messages: [{ role: 'user', content: 'x' }],
          stream: true,
          stream_options: { continuous_usage_stats: 1 },
        }),
      ),
    ).to.deep.equal({
      status: 400,
      param: 'stream_options.continuous_usage_stats',
      message: 'stream_options.continuous_usage_stats must be true or false, got 1',
    });
    // min_tokens is compared with the field the client set (it said max_tokens for max_completion_tokens).
    expect(
      problem(() =>
        parseChatRequest({
          model: 'm',
          messages: [{ role: 'user', content: 'x' }],
          min_tokens: 5,
          max_completion_tokens: 3,
          max_tokens: 9,
        }),
      ),
    ).to.deep.equal({
      status: 400,
      param: 'min_tokens',
      message: 'min_tokens (5) must be <= max_completion_tokens (3)',
    });
    expect(
      problem(() =>
        parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], min_tokens: 5, max_tokens: 3 }),
      ),
    ).to.deep.equal({
      status: 400,
      param: 'min_tokens',
      message: 'min_tokens (5) must be <= max_tokens (3)',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', echo: true, logprobs: 1 }))).to.deep.equal({
      status: 400,
      param: 'echo',
      message: 'echo with logprobs is not supported: tsserve does not compute prompt logprobs',
    });
    expect(
      problem(() => parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], top_logprobs: 2 })),
    ).to.deep.equal({
      status: 400,
      param: 'top_logprobs',
      message: 'top_logprobs needs logprobs set to true',
    });
    // user is accepted as metadata, a string as OpenAI and vLLM take it (any value passed).
    expect(
      problem(() => parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], user: { id: 7 } })),
    ).to.deep.equal({
      status: 400,
      param: 'user',
      message: 'user must be a string, got {"id":7}',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', user: 42 }))).to.deep.equal({
      status: 400,
      param: 'user',
      message: 'user must be a string, got 42',
    });
    expect(parseCompletionRequest({ model: 'm', prompt: 'x', user: null }).model).to.equal('m');
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', logprobs: 21 }))).to.deep.equal({
      status: 400,
      param: 'logprobs',
      message: 'logprobs must be an integer between 0 and 20, got 21',
    });
    expect(
      parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], logprobs: true, top_logprobs: 3 })
        .params.logprobs,
    ).to.equal(3);
    expect(
      parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], logprobs: true }).params.logprobs,
    ).to.equal(0);
    expect(
      parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], logprobs: false }).params.logprobs,
    ).to.equal(undefined);
  });

  it("should keep the messages for the model's chat template and accept max_completion_tokens", () => {
    const p = parseChatRequest({
      model: 'm',
      max_completion_tokens: 4,
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hi' },
            { type: 'text', text: '!' },
          ],
        },
      ],
    });
    // Text parts are joined with a newline, as vLLM joins them ("Hi" and "!" read "Hi!" before).
    expect(p.prompts).to.deep.equal([]);
    expect(p.chat).to.deep.equal({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi\n!' },
      ],
      addGenerationPrompt: true,
      kwargs: {},
    });
    expect(new ChatTemplate(BYTE_CHAT_TEMPLATE).render(p.chat)).to.equal('system: Be brief.\nuser: Hi\n!\nassistant:');
    expect(p.maxTokens).to.equal(4);
    expect(problem(() => parseChatRequest({ model: 'm', messages: [{ role: 'robot', content: 'x' }] }))).to.deep.equal({
      status: 400,
      param: 'messages[0].role',
      message: 'role must be one of system, developer, user, assistant, tool',
    });
    // max_completion_tokens wins, but a bad max_tokens beside it is still refused, not ignored.
    expect(
      parseChatRequest({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        max_completion_tokens: 2,
        max_tokens: 3,
      }).maxTokens,
    ).to.equal(2);
    expect(
      problem(() =>
        parseChatRequest({
          model: 'm',
          messages: [{ role: 'user', content: 'x' }],
          max_completion_tokens: 2,
          max_tokens: -5,
        }),
      ),
    ).to.deep.equal({
      status: 400,
      param: 'max_tokens',
      message: 'max_tokens must be an integer between 1 and 9007199254740991, got -5',
    });
    expect(problem(() => parseChatRequest({ model: 'm', messages: [[1]] }))).to.deep.equal({
      status: 400,
      param: 'messages[0]',
      message: 'each message must be an object {role, content}',
    });
  });
});

describe('the byte-level demo chat template', () => {
  it('should render one line per message and cue the assistant', () => {
    expect(
      new ChatTemplate(BYTE_CHAT_TEMPLATE).render({
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: 'c' },
        ],
        addGenerationPrompt: true,
        kwargs: {},
      }),
    ).to.equal('user: a\nassistant: b\nuser: c\nassistant:');
  });
});
