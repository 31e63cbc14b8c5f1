import { expect } from 'chai';
import { decodeFromGenWorkerMessage, decodeToGenWorkerMessage, isFromGenWorkerMessage } from '../../../schema/engine-ipc.js';

describe('schema/engine-ipc', () => {
  it('should accept add and abort messages and list every problem of a bad add', () => {
    expect(decodeToGenWorkerMessage({ type: 'tsserve.gen.add', requestId: 'r', prompt: 'hi', params: { n: 2, stop: ['x'] } }).ok).to.equal(true);
    expect(decodeToGenWorkerMessage({ type: 'tsserve.gen.abort', requestId: 'r' }).ok).to.equal(true);
    expect(decodeToGenWorkerMessage({ type: 'tsserve.gen.add', requestId: '', prompt: 'a', promptTokenIds: [1], params: { max_tokens: 0, temperature: -1, top_k: -2, stop: [''], ignore_eos: 1 } })).to.deep.equal({
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
    expect(decodeToGenWorkerMessage({ type: 'tsserve.batch' })).to.deep.equal({ ok: false, problems: ['type: expected tsserve.gen.add or tsserve.gen.abort, got tsserve.batch'] });
  });

  it('should validate step and error messages from the worker', () => {
    const step = {
      type: 'tsserve.gen.step', engine: 0, timestamp: 12.5, numPromptTokens: 6, numGenerationTokens: 1,
      outputs: [{ requestId: 'r', index: 0, newTokenIds: [65], text: 'A', events: [{ type: 'QUEUED', ts: 1 }, { type: 'SCHEDULED', ts: 2 }], prefill: { numPromptTokens: 6, numCachedTokens: 0, numComputedTokens: 6 } }],
      stats: { numRunning: 1, numWaiting: 0, kvCacheUsage: 0.5, prefixCacheQueries: 6, prefixCacheHits: 0, numPreemptions: 0, numSteps: 1 },
    };
    expect(decodeFromGenWorkerMessage(step).ok).to.equal(true);
    expect(isFromGenWorkerMessage(step)).to.equal(true);
    expect(decodeFromGenWorkerMessage({ ...step, outputs: [{ ...step.outputs[0], finishReason: 'done', events: [{ type: 'X', ts: 1 }] }] })).to.deep.equal({
      ok: false,
      problems: ['outputs[0].events: must be a list of {type, ts}', 'outputs[0].finishReason: unknown reason done'],
    });
    expect(decodeFromGenWorkerMessage({ type: 'tsserve.gen.error', engine: 1, requestId: 'r', message: 'no' }).ok).to.equal(true);
    expect(isFromGenWorkerMessage({ type: 'tsserve.result' })).to.equal(false);
  });
});
