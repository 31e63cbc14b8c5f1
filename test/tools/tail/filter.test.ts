import { expect } from 'chai';
import { parseDim, parseSince, selector } from '../../../tools/tail/filter.js';
import type { TailSelection } from '../../../tools/tail/filter.js';
import { toRecord } from '../../../tools/tail/record.js';
import type { TailRecord } from '../../../tools/tail/record.js';

const NOW = Date.parse('2026-11-21T14:40:00.000Z');
const ALL: TailSelection = { metrics: [], model: null, dims: [], request: null, sinceMs: null };

function rec(file: string, raw: string): TailRecord {
  const r = toRecord(file, raw);
  if (r === null) throw new Error(`does not parse: ${raw}`);
  return r;
}

const LINES = [
  rec(
    'ts_metrics.log',
    '2026-11-21T14:35:06,469 - ts_inference_requests_total.Count:1.0|#model_name:mlp,model_version:default|#hostname:vm,requestID:r1,timestamp:1795271706',
  ),
  rec(
    'model_metrics.log',
    '2026-11-21T14:35:06,470 - HandlerTime.ms:2.68|#ModelName:mlp,Level:Model|#hostname:vm,requestID:r1%2Cr2,timestamp:1795271706',
  ),
  rec(
    'model_metrics.log',
    '2026-11-21T14:36:00,000 - HandlerTime.ms:3.0|#ModelName:custom,Level:Model|#hostname:vm,requestID:r3,timestamp:1795271760',
  ),
  rec(
    'ts_metrics.log',
    '2026-11-21T14:37:00,000 - Requests2XX.Count:1.0|#Level:a%2Cb|#hostname:vm,timestamp:1795271820',
  ),
];

function kept(sel: Partial<TailSelection>): number[] {
  const keep = selector({ ...ALL, ...sel });
  return LINES.flatMap((r, i) => (keep(r) ? [i] : []));
}

describe('selector', () => {
  it('should keep everything when nothing is asked', () => {
    expect(kept({})).to.deep.equal([0, 1, 2, 3]);
  });

  it('should select by metric name, either model dimension, decoded dimension value and start time', () => {
    expect(kept({ metrics: ['HandlerTime', 'Requests2XX'] })).to.deep.equal([1, 2, 3]);
    expect(kept({ model: 'mlp' })).to.deep.equal([0, 1]);
    expect(kept({ dims: [['Level', 'a,b']] })).to.deep.equal([3]);
    expect(
      kept({
        dims: [
          ['Level', 'Model'],
          ['ModelName', 'custom'],
        ],
      }),
    ).to.deep.equal([2]);
    expect(kept({ sinceMs: Date.parse('2026-11-21T14:36:00.000Z') })).to.deep.equal([2, 3]);
  });

  it("should match a request id inside a batch's joined ids, and only whole ids", () => {
    expect(kept({ request: 'r1' })).to.deep.equal([0, 1]);
    expect(kept({ request: 'r2' })).to.deep.equal([1]);
    expect(kept({ request: 'r' })).to.deep.equal([]);
  });
});

describe('parseSince', () => {
  it("should read durations ago, ISO times and the logs' own time form", () => {
    expect([
      parseSince('90s', NOW),
      parseSince('10m', NOW),
      parseSince('2h', NOW),
      parseSince('1d', NOW),
      parseSince('1.5s', NOW),
    ]).to.deep.equal([NOW - 90_000, NOW - 600_000, NOW - 7_200_000, NOW - 86_400_000, NOW - 1500]);
    expect(parseSince('2026-11-21T14:35:06,586', NOW)).to.equal(Date.parse('2026-11-21T14:35:06.586Z'));
    expect(parseSince('2026-11-21T14:35:06Z', NOW)).to.equal(Date.parse('2026-11-21T14:35:06Z'));
    expect([parseSince('yesterday', NOW), parseSince('10x', NOW), parseSince('2026-13-45', NOW)]).to.deep.equal([
      null,
      null,
      null,
    ]);
  });

  it('should read an ISO date-time without a zone as UTC, like the logs, whatever the local zone', () => {
    // Regression: under TZ=America/New_York, 2026-11-21T14:35:06 meant 19:35:06 UTC (five hours off the logs).
    const tz = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      expect([
        parseSince('2026-11-21T14:35:06', NOW),
        parseSince('2026-11-21T14:35:06.586', NOW),
        parseSince('2026-11-21T14:35', NOW),
        parseSince('2026-11-21', NOW),
        parseSince('2026-11-21T14:35:06+01:00', NOW),
      ]).to.deep.equal([1795271706000, 1795271706586, 1795271700000, 1795219200000, 1795268106000]);
      // The space-separated form was still read as local time (19:35:06 UTC).
      expect([parseSince('2026-11-21 14:35:06', NOW), parseSince('2026-11-21 14:35', NOW)]).to.deep.equal([
        1795271706000, 1795271700000,
      ]);
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });
});

describe('parseDim', () => {
  it('should split at the first = and refuse an empty key', () => {
    expect([parseDim('Level=Model'), parseDim('k=a=b'), parseDim('k='), parseDim('=v'), parseDim('kv')]).to.deep.equal([
      ['Level', 'Model'],
      ['k', 'a=b'],
      ['k', ''],
      null,
      null,
    ]);
  });
});
