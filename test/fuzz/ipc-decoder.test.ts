/**
 * Property tests of the worker → frontend metrics message decoder (schema/ipc.ts) and the control
 * message check (schema/worker-protocol.ts): whatever a worker sends, the decoder answers a
 * message or `{ error }`, never a throw, and a message it accepts expands into exactly its
 * datapoints (the run walk ends: no hang on runs a worker got wrong).
 */
import { expect } from 'chai';
import * as fc from 'fast-check';
import { METRICS_IPC_VERSION, METRICS_MESSAGE_TYPE, decodeMetricsMessage, expandDatapoints } from '../../schema/ipc.js';
import { isFromWorkerMessage } from '../../schema/worker-protocol.js';
import { fuzzSettings } from './fuzz-settings.js';

/** Decodes; true when the outcome is `{error}` or a message that expands into its datapoints. */
function decodesCleanly(msg: unknown): boolean {
  const r = decodeMetricsMessage(msg);
  if ('error' in r) return typeof r.error === 'string' && r.error.length > 0;
  return expandDatapoints(r).length === r.seriesIds.length;
}

/** Run starts as the protocol wants them: 0 first, strictly increasing, below n (empty when n is 0). */
const starts = (n: number) =>
  n === 0
    ? fc.constant<number[]>([])
    : fc
        .uniqueArray(fc.integer({ min: 1, max: Math.max(1, n - 1) }), { maxLength: n - 1 })
        .map((xs) => [0, ...xs.filter((x) => x < n).sort((p, q) => p - q)]);

/** A well-formed metrics message of up to 10 datapoints over up to 3 series. */
const wellFormed = fc.integer({ min: 0, max: 10 }).chain((n) =>
  fc
    .record({
      n: fc.constant(n),
      ids: fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
      reqStarts: starts(n),
      timeStarts: starts(n),
      refs: fc.array(fc.integer({ min: -1, max: 2 }), { minLength: 10, maxLength: 10 }),
      times: fc.array(fc.double({ min: 0, max: 2e12, noNaN: true }), { minLength: 10, maxLength: 10 }),
      values: fc.array(fc.double(), { minLength: n, maxLength: n }),
    })
    .map((g) => {
      const requestIds = g.ids.length === 0 ? ['r'] : g.ids;
      return {
        type: METRICS_MESSAGE_TYPE,
        v: METRICS_IPC_VERSION,
        seq: 0,
        metrics: [{ name: 'm', type: 'counter', unit: 'Count', dimensions: ['D'] }],
        series: [0, 1, 2].map((id) => ({ id, metric: 'm', values: [`v${id}`] })),
        seriesIds: Uint32Array.from({ length: g.n }, (_, i) => i % 3),
        values: Float64Array.from(g.values),
        requestRuns: Int32Array.from(g.reqStarts.flatMap((s, i) => [s, Math.min(g.refs[i]!, requestIds.length - 1)])),
        requestIds,
        timeRuns: Float64Array.from(g.timeStarts.flatMap((s, i) => [s, g.times[i]!])),
        dropped: {},
        overflowed: {},
      } as Record<string, unknown>;
    }),
);

/** A well-formed message, or one with a field replaced or a run number changed: what a faulty worker sends. */
const message = fc.oneof(
  wellFormed,
  fc
    .tuple(
      wellFormed,
      fc.constantFrom(
        'seq',
        'metrics',
        'series',
        'seriesIds',
        'values',
        'requestRuns',
        'requestIds',
        'timeRuns',
        'dropped',
        'overflowed',
      ),
      fc.anything({ withTypedArray: true }),
    )
    .map(([m, k, v]) => ({ ...m, [k]: v })),
  fc
    .tuple(wellFormed, fc.constantFrom('requestRuns', 'timeRuns'), fc.nat(20), fc.integer({ min: -3, max: 12 }))
    .map(([m, k, at, v]) => {
      const runs = (m[k] as Int32Array | Float64Array).slice();
      if (runs.length > 0) runs[at % runs.length] = v;
      return { ...m, [k]: runs };
    }),
);

/** How many of the 500 seed-26 messages the decoder accepts (the assertion below shows the new count when a generator or fast-check changes). */
const ACCEPTED_OF_500 = 253;

/** A well-formed message: n datapoints, one run each of request ids and times. */
function valid(n: number): Record<string, unknown> {
  return {
    type: METRICS_MESSAGE_TYPE,
    v: METRICS_IPC_VERSION,
    seq: 0,
    metrics: [],
    series: [{ id: 0, metric: 'm', values: [] }],
    seriesIds: new Uint32Array(n),
    values: new Float64Array(n),
    requestRuns: n === 0 ? new Int32Array(0) : Int32Array.from([0, -1]),
    requestIds: [],
    timeRuns: n === 0 ? new Float64Array(0) : Float64Array.from([0, 1_700_000_000_000]),
    dropped: {},
    overflowed: {},
  };
}

describe('fuzz: the worker IPC decoders', () => {
  it('should answer any value with a message or an error, never a throw', () => {
    fc.assert(
      fc.property(fc.anything({ withTypedArray: true, withMap: true, withSet: true }), (v) => {
        return decodesCleanly(v) && typeof isFromWorkerMessage(v) === 'boolean';
      }),
      fuzzSettings(),
    );
  });

  it('should answer metrics messages with any fields and runs with a message that expands into its datapoints, or an error', () => {
    fc.assert(fc.property(message, decodesCleanly), fuzzSettings(500));
  });

  it('should answer a valid message with one field replaced by any value with a message or an error', () => {
    const fields = Object.keys(valid(1));
    fc.assert(
      fc.property(fc.nat(8), fc.constantFrom(...fields), fc.anything({ withTypedArray: true }), (n, field, v) =>
        decodesCleanly({ ...valid(n), [field]: v }),
      ),
      fuzzSettings(400),
    );
  });

  it('should generate accepted messages too, not only refusals (seed 26: 500 cases)', () => {
    const accepted = fc
      .sample(message, { seed: 26, numRuns: 500 })
      .filter((m) => !('error' in decodeMetricsMessage(m))).length;
    expect(accepted).to.equal(ACCEPTED_OF_500);
  });

  it('should accept the well-formed message the properties start from, with all its datapoints', () => {
    const r = decodeMetricsMessage(valid(3));
    expect('error' in r ? r.error : expandDatapoints(r).length).to.equal(3);
  });
});
