import { expect } from 'chai';
import type { GenRequestOutput, ToGenWorkerMessage } from '../../../schema/engine-ipc.js';
import { GenerationEngine } from '../../../frontend/generation/generation-engine.js';
import type { GenerationSink } from '../../../frontend/generation/generation-engine.js';
import { ChoiceCollector } from '../../../frontend/openai/choice-collector.js';
import { FakeMetrics } from './fake-metrics.js';

const CACHE = { blockSize: 16, numBlocks: 64, enablePrefixCaching: true };

function recorder(): GenerationSink & { outputs: GenRequestOutput[]; errors: [number, string][] } {
  const r = {
    outputs: [] as GenRequestOutput[],
    errors: [] as [number, string][],
    onOutput: (o: GenRequestOutput) => {
      r.outputs.push(o);
    },
    onError: (s: number, m: string) => {
      r.errors.push([s, m]);
    },
  };
  return r;
}

describe('GenerationEngine', () => {
  let m: FakeMetrics;
  let sent: ToGenWorkerMessage[];
  let engine: GenerationEngine;

  beforeEach(() => {
    m = new FakeMetrics();
    sent = [];
    engine = new GenerationEngine(
      'W-1',
      0,
      'tiny',
      m,
      CACHE,
      () => 0,
      (msg) => {
        sent.push(msg);
        return true;
      },
    );
  });

  it('should send add and abort, route outputs, and forget a request once all its sequences finished', () => {
    const sink = recorder();
    expect(engine.add('r', 0, 'Hi', { max_tokens: 2, n: 2 }, sink)).to.equal(true);
    engine.abort('r');
    expect(sent).to.deep.equal([
      { type: 'tsserve.gen.add', requestId: 'r', prompt: 'Hi', params: { max_tokens: 2, n: 2 } },
      { type: 'tsserve.gen.abort', requestId: 'r' },
    ]);
    const fin = (index: number): GenRequestOutput => ({
      requestId: 'r',
      index,
      newTokenIds: [],
      text: '',
      events: [],
      finishReason: 'abort',
    });
    engine.onStep({
      type: 'tsserve.gen.step',
      engine: 0,
      timestamp: 1,
      outputs: [fin(0)],
      numPromptTokens: 0,
      numGenerationTokens: 0,
    });
    expect(engine.load).to.equal(1);
    engine.onStep({
      type: 'tsserve.gen.step',
      engine: 0,
      timestamp: 2,
      outputs: [fin(1)],
      numPromptTokens: 0,
      numGenerationTokens: 0,
    });
    expect(engine.load).to.equal(0);
    expect(sink.outputs).to.have.length(2);
    expect(m.sum('ts_request_success_total{finished_reason=abort}')).to.equal(2);
    engine.abort('r');
    expect(sent).to.have.length(2); // a finished request is not aborted again
  });

  it('should answer a refused request with 400 and count nothing', () => {
    const sink = recorder();
    engine.add('r', 0, 'x'.repeat(5000), { max_tokens: 2 }, sink);
    engine.onError({ type: 'tsserve.gen.error', engine: 0, requestId: 'r', message: 'the prompt is too long' });
    expect(sink.errors).to.deep.equal([[400, 'the prompt is too long']]);
    expect(m.sum('ts_request_success_total{finished_reason=error}')).to.equal(0);
    expect(m.values('ts_request_params_n')).to.deep.equal([]);
  });

  it('should fail every request with error when the engine fails', () => {
    const a = recorder();
    const b = recorder();
    engine.add('a', 0, 'x', { max_tokens: 2 }, a);
    engine.add('b', 0, 'y', { max_tokens: 2, n: 3 }, b);
    engine.onError({ type: 'tsserve.gen.error', engine: 0, message: 'onnxruntime crashed' });
    expect(a.errors).to.deep.equal([[500, 'engine 0 failed: onnxruntime crashed']]);
    expect(b.errors).to.have.length(1);
    expect(m.sum('ts_request_success_total{finished_reason=error}')).to.equal(4);
    expect(engine.load).to.equal(0);
  });

  it('should drop a request it could not send', () => {
    const e = new GenerationEngine(
      'W-2',
      1,
      'tiny',
      m,
      CACHE,
      () => 0,
      () => false,
    );
    expect(e.add('r', 0, 'x', { max_tokens: 1 }, recorder())).to.equal(false);
    expect(e.load).to.equal(0);
    expect(e.stats.inFlight).to.equal(0);
  });
});

describe('ChoiceCollector', () => {
  it('should fold texts, finish reasons and usage per choice', () => {
    const c = new ChoiceCollector([6], 2);
    const pf = { numPromptTokens: 6, numCachedTokens: 0, numComputedTokens: 6 };
    c.add({ requestId: 'r', index: 0, newTokenIds: [72], text: 'H', events: [], prefill: pf });
    c.add({ requestId: 'r', index: 1, newTokenIds: [73], text: 'I', events: [], prefill: pf });
    c.add({
      requestId: 'r',
      index: 0,
      newTokenIds: [10],
      text: '',
      events: [],
      finishReason: 'stop',
      stopReason: '\n',
    });
    expect(c.done).to.equal(false);
    c.add({ requestId: 'r', index: 1, newTokenIds: [74], text: 'J', events: [], finishReason: 'length' });
    expect(c.done).to.equal(true);
    expect(c.error).to.equal(false);
    expect(c.choices).to.deep.equal([
      { text: 'H', finishReason: 'stop', stopReason: '\n', tokenIds: [72, 10], logprobs: [], prompt: 0 },
      { text: 'IJ', finishReason: 'length', stopReason: null, tokenIds: [73, 74], logprobs: [], prompt: 0 },
    ]);
    expect(c.usage()).to.deep.equal({
      prompt_tokens: 6,
      completion_tokens: 4,
      total_tokens: 10,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  it('should index the choices of several prompts prompt × n + i and sum prompt and cached tokens', () => {
    const c = new ChoiceCollector([5, 40], 2);
    const pf = (
      p: number,
      cached: number,
    ): { numPromptTokens: number; numCachedTokens: number; numComputedTokens: number } => ({
      numPromptTokens: p,
      numCachedTokens: cached,
      numComputedTokens: p - cached,
    });
    c.add(
      {
        requestId: 'b',
        index: 1,
        newTokenIds: [66],
        text: 'B',
        events: [],
        prefill: pf(40, 32),
        finishReason: 'length',
      },
      1,
    );
    c.add(
      {
        requestId: 'b',
        index: 0,
        newTokenIds: [65],
        text: 'A',
        events: [],
        prefill: pf(40, 32),
        finishReason: 'length',
      },
      1,
    );
    c.add(
      {
        requestId: 'a',
        index: 0,
        newTokenIds: [97, 98],
        text: 'ab',
        events: [],
        prefill: pf(5, 0),
        finishReason: 'length',
      },
      0,
    );
    expect(c.done).to.equal(false);
    c.add(
      { requestId: 'a', index: 1, newTokenIds: [99], text: 'c', events: [], prefill: pf(5, 0), finishReason: 'stop' },
      0,
    );
    expect(c.done).to.equal(true);
    expect(c.choices.map((x) => [x.prompt, x.text])).to.deep.equal([
      [0, 'ab'],
      [0, 'c'],
      [1, 'A'],
      [1, 'B'],
    ]);
    expect(c.usage()).to.deep.equal({
      prompt_tokens: 45,
      completion_tokens: 5,
      total_tokens: 50,
      prompt_tokens_details: { cached_tokens: 32 },
    });
    expect(c.choiceUsage(c.choices[3]!)).to.deep.equal({
      prompt_tokens: 40,
      completion_tokens: 1,
      total_tokens: 41,
      prompt_tokens_details: { cached_tokens: 32 },
    });
  });
});
