import { expect } from 'chai';
import {
  decodeFromGenWorkerMessage,
  decodeToGenWorkerMessage,
  isFromGenWorkerMessage,
} from '../../../schema/engine-ipc.js';

describe('schema/engine-ipc', () => {
  it('should accept add and abort messages and list every problem of a bad add', () => {
    expect(
      decodeToGenWorkerMessage({ type: 'tsserve.gen.add', requestId: 'r', prompt: 'hi', params: { n: 2, stop: ['x'] } })
        .ok,
    ).to.equal(true);
    expect(decodeToGenWorkerMessage({ type: 'tsserve.gen.abort', requestId: 'r' }).ok).to.equal(true);
    expect(
      decodeToGenWorkerMessage({
        type: 'tsserve.gen.add',
        requestId: '',
        prompt: 'a',
        promptTokenIds: [1],
        params: { max_tokens: 0, temperature: -1, top_k: -2, stop: [''], ignore_eos: 1 },
      }),
    ).to.deep.equal({
      ok: false,
      problems: [
        'requestId: must be a non-empty string',
        'prompt: give exactly one of prompt (string) or promptTokenIds',
        'params.max_tokens: must be an integer >= 1',
        'params.top_k: must be an integer >= -1',
        'params.temperature: must be a number >= 0',
        'params.stop: must be a list of non-empty strings',
        'params.ignore_eos: must be a boolean',
      ],
    });
    expect(decodeToGenWorkerMessage({ type: 'tsserve.batch' })).to.deep.equal({
      ok: false,
      problems: ['type: expected tsserve.gen.add or tsserve.gen.abort, got tsserve.batch'],
    });
  });

  it('should check the penalty, bias, min_p and logprobs params of an add', () => {
    const ok = {
      min_p: 0.1,
      presence_penalty: -2,
      frequency_penalty: 2,
      repetition_penalty: 1.3,
      logit_bias: { 65: -100, 66: 7.5 },
      logprobs: 5,
      include_stop_str_in_output: true,
    };
    expect(decodeToGenWorkerMessage({ type: 'tsserve.gen.add', requestId: 'r', prompt: 'hi', params: ok }).ok).to.equal(
      true,
    );
    const bad = {
      min_p: 1.5,
      presence_penalty: 3,
      frequency_penalty: -2.5,
      repetition_penalty: 0,
      logit_bias: { x: 1 },
      logprobs: -1,
      include_stop_str_in_output: 'yes',
    };
    expect(
      decodeToGenWorkerMessage({ type: 'tsserve.gen.add', requestId: 'r', prompt: 'hi', params: bad }),
    ).to.deep.equal({
      ok: false,
      problems: [
        'params.min_p: must be a number in [0, 1]',
        'params.presence_penalty: must be a number in [-2, 2]',
        'params.frequency_penalty: must be a number in [-2, 2]',
        'params.repetition_penalty: must be a number in (0, 2147483648]',
        'params.logit_bias: must map token ids to numbers in [-100, 100]',
        'params.logprobs: must be an integer >= 0',
        'params.include_stop_str_in_output: must be a boolean',
      ],
    });
  });

  it("should take a seed in [0, 2^53 - 1] only (the offline CLI's params file reaches the engine through this check)", () => {
    const add = (seed: unknown): unknown =>
      decodeToGenWorkerMessage({ type: 'tsserve.gen.add', requestId: 'r', prompt: 'hi', params: { seed } });
    expect(add(0)).to.deep.equal({
      ok: true,
      msg: { type: 'tsserve.gen.add', requestId: 'r', prompt: 'hi', params: { seed: 0 } },
    });
    expect(add(2 ** 53 - 1)).to.deep.equal({
      ok: true,
      msg: { type: 'tsserve.gen.add', requestId: 'r', prompt: 'hi', params: { seed: 9007199254740991 } },
    });
    for (const seed of [-1, 2 ** 53, 2 ** 64, 1.5]) {
      expect(add(seed), String(seed)).to.deep.equal({
        ok: false,
        problems: ['params.seed: must be an integer in [0, 9007199254740991]'],
      });
    }
  });

  it('should validate step and error messages from the worker', () => {
    const step = {
      type: 'tsserve.gen.step',
      engine: 0,
      timestamp: 12.5,
      numPromptTokens: 6,
      numGenerationTokens: 1,
      outputs: [
        {
          requestId: 'r',
          index: 0,
          newTokenIds: [65],
          text: 'A',
          events: [
            { type: 'QUEUED', ts: 1 },
            { type: 'SCHEDULED', ts: 2 },
          ],
          prefill: { numPromptTokens: 6, numCachedTokens: 0, numComputedTokens: 6 },
        },
      ],
      stats: {
        numRunning: 1,
        numWaiting: 0,
        kvCacheUsage: 0.5,
        prefixCacheQueries: 6,
        prefixCacheHits: 0,
        numPreemptions: 0,
        numSteps: 1,
      },
    };
    expect(decodeFromGenWorkerMessage(step).ok).to.equal(true);
    expect(isFromGenWorkerMessage(step)).to.equal(true);
    expect(
      decodeFromGenWorkerMessage({
        ...step,
        outputs: [{ ...step.outputs[0], finishReason: 'done', events: [{ type: 'X', ts: 1 }] }],
      }),
    ).to.deep.equal({
      ok: false,
      problems: ['outputs[0].events: must be a list of {type, ts}', 'outputs[0].finishReason: unknown reason done'],
    });
    const withLogprobs = {
      ...step.outputs[0],
      logprobs: [
        {
          id: 65,
          logprob: -0.5,
          top: [
            { id: 65, logprob: -0.5 },
            { id: 66, logprob: -1.5 },
          ],
        },
      ],
    };
    expect(decodeFromGenWorkerMessage({ ...step, outputs: [withLogprobs] }).ok).to.equal(true);
    expect(
      decodeFromGenWorkerMessage({
        ...step,
        outputs: [{ ...withLogprobs, logprobs: [{ id: 65, logprob: null, top: [] }] }],
      }),
    ).to.deep.equal({
      ok: false,
      problems: ['outputs[0].logprobs: must be a list of {id, logprob, top}'],
    });
    const stats = {
      numRunning: 0,
      numWaiting: 0,
      kvCacheUsage: 0,
      prefixCacheQueries: 0,
      prefixCacheHits: 0,
      numPreemptions: 0,
      numSteps: 1,
    };
    expect(decodeFromGenWorkerMessage({ ...step, stats: { ...stats, kvEvictionsDropped: 4 } }).ok).to.equal(true);
    for (const bad of [0, -1, 1.5, '4']) {
      expect(decodeFromGenWorkerMessage({ ...step, stats: { ...stats, kvEvictionsDropped: bad } })).to.deep.equal({
        ok: false,
        problems: ['stats.kvEvictionsDropped: must be a positive integer'],
      });
    }
    expect(
      decodeFromGenWorkerMessage({ type: 'tsserve.gen.error', engine: 1, requestId: 'r', message: 'no' }).ok,
    ).to.equal(true);
    expect(isFromGenWorkerMessage({ type: 'tsserve.result' })).to.equal(false);
  });
});
