import { expect } from 'chai';
import { applyChatTemplate } from '../../../frontend/openai/chat-template.js';
import { OpenAIError } from '../../../frontend/openai/errors.js';
import { checkPromptVocab, parseChatRequest, parseCompletionRequest } from '../../../frontend/openai/params.js';

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
    expect(parseCompletionRequest({ model: 'tiny-lm', prompt: 'Hi' })).to.deep.equal({
      model: 'tiny-lm', prompt: 'Hi', params: { max_tokens: 16, n: 1 }, stream: false, includeUsage: false,
    });
    expect(parseCompletionRequest({
      model: 'm', prompt: ['x'], max_tokens: 5, temperature: 0, top_p: 0.5, top_k: 3, seed: 7, n: 2, stop: 'zz',
      ignore_eos: true, stream: true, stream_options: { include_usage: true }, logprobs: null,
    })).to.deep.equal({
      model: 'm', prompt: 'x', stream: true, includeUsage: true,
      params: { max_tokens: 5, n: 2, temperature: 0, top_p: 0.5, top_k: 3, seed: 7, stop: ['zz'], ignore_eos: true },
    });
  });

  it('should reject bad params with 400 naming the parameter', () => {
    expect(problem(() => parseCompletionRequest({ prompt: 'x' }))).to.deep.equal({
      status: 400, param: 'model', message: 'model is required: the name of a served generation model (GET /v1/models)',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 3 }))).to.deep.equal({
      status: 400, param: 'prompt', message: 'prompt must be a string or a list of token ids (one prompt per request)',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', max_tokens: 0 }))).to.deep.equal({
      status: 400, param: 'max_tokens', message: 'max_tokens must be an integer between 1 and 9007199254740991, got 0',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', temperature: 3 }))).to.deep.equal({
      status: 400, param: 'temperature', message: 'temperature must be a number between 0 and 2, got 3',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', stop: [''] }))).to.deep.equal({
      status: 400, param: 'stop', message: 'stop must be a non-empty string or a list of non-empty strings',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: 'x', stream_options: { include_usage: true } }))).to.deep.equal({
      status: 400, param: 'stream_options', message: 'stream_options is only allowed when stream is true',
    });
    expect(problem(() => parseCompletionRequest([1]))).to.deep.equal({ status: 400, param: null, message: 'the request body must be a JSON object' });
  });

  it('should accept a prompt of token ids (OpenAI\'s prompt: number[]) and check it against the vocabulary', () => {
    const p = parseCompletionRequest({ model: 'm', prompt: [256, 72, 105] });
    expect(p.prompt).to.deep.equal([256, 72, 105]);
    expect(parseCompletionRequest({ model: 'm', prompt: [[256, 72]] }).prompt).to.deep.equal([256, 72]);
    expect(() => checkPromptVocab(p, 259)).to.not.throw();
    expect(() => checkPromptVocab(p, undefined)).to.not.throw();
    expect(problem(() => checkPromptVocab(p, 256))).to.deep.equal({
      status: 400, param: 'prompt', message: "prompt token id 256 at index 0 is outside the model's vocabulary (0..255)",
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: [] }))).to.deep.equal({ status: 400, param: 'prompt', message: 'prompt must not be empty' });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: [1, 2.5] }))).to.deep.equal({
      status: 400, param: 'prompt', message: 'prompt token ids must be integers >= 0, got 2.5 at index 1',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: [3, -1] }))).to.deep.equal({
      status: 400, param: 'prompt', message: 'prompt token ids must be integers >= 0, got -1 at index 1',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: [[1], [2]] }))).to.deep.equal({
      status: 400, param: 'prompt', message: 'prompt must be a string or a list of token ids (one prompt per request)',
    });
    expect(problem(() => parseCompletionRequest({ model: 'm', prompt: [1, 'a'] }))).to.deep.equal({
      status: 400, param: 'prompt', message: 'prompt must be a string or a list of token ids (one prompt per request)',
    });
  });

  it('should apply the chat template and accept max_completion_tokens', () => {
    const p = parseChatRequest({
      model: 'm', max_completion_tokens: 4,
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'text', text: '!' }] }],
    });
    expect(p.prompt).to.equal('system: Be brief.\nuser: Hi!\nassistant:');
    expect(p.params.max_tokens).to.equal(4);
    expect(problem(() => parseChatRequest({ model: 'm', messages: [{ role: 'robot', content: 'x' }] }))).to.deep.equal({
      status: 400, param: 'messages[0].role', message: 'role must be one of system, developer, user, assistant, tool',
    });
  });
});

describe('applyChatTemplate', () => {
  it('should render one line per message and cue the assistant', () => {
    expect(applyChatTemplate([{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }]))
      .to.equal('user: a\nassistant: b\nuser: c\nassistant:');
  });
});
