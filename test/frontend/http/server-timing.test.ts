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

  it('should render a prediction exactly as serverTiming renders its entries, left-out durations included', () => {
    const cases: Array<[number, number | undefined, number]> = [
      [1200, 3400.4, 5000],
      [0, undefined, 812.5],
      [-1, 3400, 5000],
      [Number.NaN, undefined, 10],
      [1, -2, Number.POSITIVE_INFINITY],
      [-1, -1, -1],
      [-1, undefined, 7],
    ];
    expect(cases.map(([q, h, t]) => predictionTiming(q, h, t))).to.deep.equal([
      'queue;dur=1.2, handler;dur=3.4, total;dur=5',
      'queue;dur=0, total;dur=0.813',
      'handler;dur=3.4, total;dur=5',
      'total;dur=0.01',
      'queue;dur=0.001',
      '',
      'total;dur=0.007',
    ]);
    for (const [q, h, t] of cases) {
      const entries: Array<[string, number]> = [['queue', q / 1000]];
      if (h !== undefined) entries.push(['handler', h / 1000]);
      entries.push(['total', t / 1000]);
      expect(predictionTiming(q, h, t)).to.equal(serverTiming(entries));
    }
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
