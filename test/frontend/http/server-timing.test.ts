import { expect } from 'chai';
import {
  generationTiming,
  parseServerTiming,
  predictionTiming,
  serverTiming,
} from '../../../frontend/http/server-timing.js';

describe('serverTiming', () => {
  it('should render ms to the microsecond and leave out non-finite or negative durations', () => {
    expect(
      serverTiming([
        ['queue', 1.23456],
        ['handler', Number.NaN],
        ['x', -1],
        ['total', 5],
      ]),
    ).to.equal('queue;dur=1.235, total;dur=5');
  });

  it('should render a prediction from µs, without handler when the worker never ran it', () => {
    expect([predictionTiming(1200, 3400.4, 5000), predictionTiming(0, undefined, 812.5)]).to.deep.equal([
      'queue;dur=1.2, handler;dur=3.4, total;dur=5',
      'queue;dur=0, total;dur=0.813',
    ]);
  });

  it("should render a generation's four phases", () => {
    expect(generationTiming({ queueMs: 0.04, prefillMs: 2.672, decodeMs: 15.5521, totalMs: 36.554 })).to.equal(
      'queue;dur=0.04, prefill;dur=2.672, decode;dur=15.552, total;dur=36.554',
    );
  });
});

describe('parseServerTiming', () => {
  it('should read each dur and skip entries without one', () => {
    expect(parseServerTiming('queue;dur=1.2, cache;desc="hit", handler;desc=x;dur=3.4,total;dur=5')).to.deep.equal({
      queue: 1.2,
      handler: 3.4,
      total: 5,
    });
  });
});
