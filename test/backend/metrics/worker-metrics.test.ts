import { expect } from 'chai';
import { createWorkerMetrics, WorkerMetrics } from '../../../backend/metrics/index.js';
import { decodeMetricsMessage, expandDatapoints } from '../../../schema/ipc.js';
import type { MetricsMessage } from '../../../schema/ipc.js';
import { config, MODEL_SPECS, spec } from './config.js';

/** A cache wired to an array of sent messages, a log array and a settable clock. */
function setup(opts: { autoDetect?: boolean; maxPointsPerFlush?: number; maxSeriesPerMetric?: number } = {}) {
  const sent: MetricsMessage[] = [];
  const logs: string[] = [];
  const clock = { now: 1_700_000_000_000 };
  const wm = new WorkerMetrics(config(MODEL_SPECS, opts), {
    modelName: 'mlp',
    send: (m) => sent.push(copy(m)),
    log: (m) => logs.push(m),
    nowMs: () => clock.now,
    autoDetect: opts.autoDetect,
  });
  return { wm, sent, logs, clock };
}

/** A message with its typed arrays copied (they are views of recycled buffers). */
function copy(m: MetricsMessage): MetricsMessage {
  return {
    ...m,
    seriesIds: m.seriesIds.slice(),
    values: m.values.slice(),
    requestRuns: m.requestRuns.slice(),
    timeRuns: m.timeRuns.slice(),
  };
}

/** The wire arrays of a message as plain arrays: seriesIds, values, requestRuns, timeRuns. */
function wire(m: MetricsMessage): number[][] {
  return [Array.from(m.seriesIds), Array.from(m.values), Array.from(m.requestRuns), Array.from(m.timeRuns)];
}

/** Datapoints of a message as [metric, values, value, requestId|null, timeMs], series resolved. */
function points(msgs: readonly MetricsMessage[]): Array<[string, string[], number, string | null, number]> {
  const series = new Map<number, { metric: string; values: readonly string[] }>();
  const out: Array<[string, string[], number, string | null, number]> = [];
  for (const m of msgs) {
    for (const s of m.series) series.set(s.id, s);
    for (const p of expandDatapoints(m)) {
      const s = series.get(p.seriesId)!;
      out.push([s.metric, [...s.values], p.value, p.requestId, p.timeMs]);
    }
  }
  return out;
}

describe('WorkerMetrics', () => {
  describe('binding dimension values', () => {
    it('should bind by name in any order and by declared order to the same series', () => {
      const { wm, sent } = setup();
      const m = wm.getMetric('InferenceCount', 'counter');
      m.addOrUpdate(1, { Device: 'cpu', Level: 'Model', ModelName: 'mlp' });
      m.addOrUpdate(2, ['mlp', 'Model', 'cpu']);
      m.bind({ Level: 'Model', ModelName: 'mlp', Device: 'cpu' }).record(3);
      expect(wm.flush()).to.equal(3);
      expect(sent).to.have.length(1);
      expect(sent[0].series).to.deep.equal([{ id: 0, metric: 'InferenceCount', values: ['mlp', 'Model', 'cpu'] }]);
      expect(wire(sent[0])).to.deep.equal([
        [0, 0, 0],
        [1, 2, 3],
        [0, -1],
        [0, 1_700_000_000_000],
      ]);
    });

    it('should drop missing, extra, misnamed and miscounted values as bad_dimensions and warn once', () => {
      const { wm, logs } = setup();
      const m = wm.getMetric('HandlerTime');
      m.addOrUpdate(1, { ModelName: 'mlp' });
      m.addOrUpdate(1, { ModelName: 'mlp', Level: 'Model', Extra: 'x' });
      m.addOrUpdate(1, { ModelName: 'mlp', Levl: 'Model' });
      m.addOrUpdate(1, ['mlp']);
      m.addOrUpdate(1, ['mlp', 'Model', 'x']);
      m.addOrUpdate(1);
      m.bind(['mlp']).record(1);
      expect(wm.dropped).to.deep.equal({ bad_dimensions: 7 });
      expect(logs).to.deep.equal([
        '[METRICS]Failed to update metric with name:HandlerTime: Dimension values {"ModelName":"mlp"} should correspond ' +
          'to Dimension names: [ModelName, Level] (bad_dimensions; further drops of this kind are counted, not logged)',
      ]);
      expect(wm.flush()).to.equal(0);
    });

    it('should drop a dimension value over 1024 characters as bad_dimensions, saying which and how long', () => {
      const { wm, logs, sent } = setup();
      const m = wm.getMetric('HandlerTime');
      m.addOrUpdate(1, ['mlp', 'x'.repeat(1024)]); // at the bound: kept
      m.addOrUpdate(2, ['mlp', 'x'.repeat(1025)]);
      m.bind({ ModelName: 'y'.repeat(100_000), Level: 'Model' }).record(3);
      expect(wm.dropped).to.deep.equal({ bad_dimensions: 2 });
      expect(logs).to.deep.equal([
        '[METRICS]Failed to update metric with name:HandlerTime: Dimension value for Level has 1025 characters; at most 1024 are kept as a label ' +
          '(bad_dimensions; further drops of this kind are counted, not logged)',
      ]);
      wm.flush();
      expect(points(sent).map((p) => [p[0], p[1][1]!.length, p[2]])).to.deep.equal([['HandlerTime', 1024, 1]]);
    });

    it('should drop a dimension value holding a lone surrogate as bad_dimensions (two such values rendered as one U+FFFD series)', () => {
      const { wm, logs, sent } = setup();
      const m = wm.getMetric('HandlerTime');
      m.addOrUpdate(1, ['mlp', 'a\uD800']);
      m.addOrUpdate(2, ['mlp', '\uDC00b']);
      m.addOrUpdate(3, ['mlp', 'ok \uD83D\uDE00']); // a whole pair (an emoji) is fine
      expect(wm.dropped).to.deep.equal({ bad_dimensions: 2 });
      expect(logs).to.deep.equal([
        '[METRICS]Failed to update metric with name:HandlerTime: Dimension value for Level holds half of a UTF-16 surrogate pair; every sink would write it as U+FFFD, the same as any other such value ' +
          '(bad_dimensions; further drops of this kind are counted, not logged)',
      ]);
      wm.flush();
      expect(points(sent).map((p) => [p[0], p[1][1], p[2]])).to.deep.equal([['HandlerTime', 'ok \uD83D\uDE00', 3]]);
    });

    it('should keep values containing separators apart (no key collision)', () => {
      const { wm, sent } = setup();
      const m = wm.getMetric('HandlerTime');
      m.addOrUpdate(1, ['a|', '']);
      m.addOrUpdate(2, ['a', '|']);
      m.addOrUpdate(3, ['a,b:c', '|#x']);
      wm.flush();
      expect(sent[0].series).to.deep.equal([
        { id: 0, metric: 'HandlerTime', values: ['a|', ''] },
        { id: 1, metric: 'HandlerTime', values: ['a', '|'] },
        { id: 2, metric: 'HandlerTime', values: ['a,b:c', '|#x'] },
      ]);
    });

    it('should fold series beyond maxSeriesPerMetric into one overflow series', () => {
      const { wm, sent } = setup({ maxSeriesPerMetric: 2 });
      const m = wm.getMetric('LatencyHist');
      for (const v of ['a', 'b', 'c', 'd']) m.addOrUpdate(1, [v]);
      wm.flush();
      expect(sent[0].series.map((s) => s.values)).to.deep.equal([['a'], ['b'], ['__overflow__']]);
      expect(Array.from(sent[0].seriesIds)).to.deep.equal([0, 1, 2, 2]);
    });
  });

  describe('values', () => {
    it('should give a metric without dimensions one series whether values are omitted, [] or {}', () => {
      const { wm, sent } = setup();
      const m = wm.getMetric('NoDims');
      m.addOrUpdate(1);
      m.addOrUpdate(2, []);
      m.addOrUpdate(3, {});
      m.addOrUpdate(4, {});
      wm.flush();
      expect(sent[0]!.series).to.deep.equal([{ id: 0, metric: 'NoDims', values: [] }]);
      expect(points(sent).map((p) => [p[0], p[2]])).to.deep.equal([
        ['NoDims', 1],
        ['NoDims', 2],
        ['NoDims', 3],
        ['NoDims', 4],
      ]);
      expect(wm.dropped).to.deep.equal({});
    });

    it('should drop NaN, Infinity, non-numbers (not_finite) and negative counter increments', () => {
      const { wm, logs } = setup();
      const c = wm.getMetric('NoDims', 'counter').bind();
      c.record(NaN);
      c.record(Infinity);
      c.record(-Infinity);
      c.record('5' as unknown as number);
      c.record(-1);
      c.record(0);
      c.record(2.5);
      const g = wm.getMetric('HandlerTime', 'gauge');
      g.addOrUpdate(-3, ['mlp', 'Model']);
      g.addOrUpdate(NaN, ['mlp', 'Model'], 'req-1');
      wm.getMetric('NoDims').addOrUpdate(-2, undefined, 'req-1');
      expect(wm.dropped).to.deep.equal({ not_finite: 5, negative_counter: 2 });
      expect(logs).to.deep.equal([
        '[METRICS]Failed to update metric with name:NoDims: value NaN is not a finite number ' +
          '(not_finite; further drops of this kind are counted, not logged)',
        '[METRICS]Failed to update metric with name:NoDims: Counter metric update value cannot be negative ' +
          '(negative_counter; further drops of this kind are counted, not logged)',
        '[METRICS]Failed to update metric with name:HandlerTime: value NaN is not a finite number ' +
          '(not_finite; further drops of this kind are counted, not logged)',
      ]);
      expect(wm.flush()).to.equal(3);
    });

    it('should send the drop deltas with each flush and keep the totals', () => {
      const { wm, sent } = setup();
      wm.getMetric('NoDims').bind().record(-1);
      wm.getMetric('Nope').addOrUpdate(1);
      wm.flush();
      wm.getMetric('NoDims').bind().record(NaN);
      wm.flush();
      wm.flush();
      expect(sent.map((m) => m.dropped)).to.deep.equal([{ negative_counter: 1, unknown_metric: 1 }, { not_finite: 1 }]);
      expect(wm.dropped).to.deep.equal({ negative_counter: 1, unknown_metric: 1, not_finite: 1 });
    });
  });

  describe('addMetric and getMetric', () => {
    it('should return the declared metric with its yaml unit, accepting dimension names in any order', () => {
      const { wm } = setup();
      const m = wm.addMetric('HandlerTime', 's', ['Level', 'ModelName'], 'gauge');
      // In the order given: a list of values follows it (next test).
      expect([m.name, m.type, m.unit, m.dimensions]).to.deep.equal([
        'HandlerTime',
        'gauge',
        'ms',
        ['Level', 'ModelName'],
      ]);
      const declared = wm.getMetric('HandlerTime');
      expect(declared.dimensions).to.deep.equal(['ModelName', 'Level']);
      expect(wm.addMetric('HandlerTime', 'ms')).to.equal(declared);
      expect(wm.addMetric('HandlerTime', 'ms', ['ModelName', 'Level'])).to.equal(declared);
    });

    it("should take TorchServe's backwards-compatible update(value, request_id, dimensions) as addOrUpdate (a ported handler's call threw a TypeError)", () => {
      const { wm, sent, clock } = setup();
      wm.getMetric('HandlerTime').update(3.5, 'req-1', ['mlp', 'Model']);
      wm.addMetric('HandlerTime', 'ms', ['Level', 'ModelName']).update(4, undefined, ['Model', 'mlp']);
      wm.addMetric('HandlerTime', 'ms', undefined, 'counter').update(1); // a mismatch: dropped, not thrown
      wm.flush();
      expect(points(sent)).to.deep.equal([
        ['HandlerTime', ['mlp', 'Model'], 3.5, 'req-1', clock.now],
        ['HandlerTime', ['mlp', 'Model'], 4, null, clock.now],
      ]);
      expect(wm.dropped).to.deep.equal({ type_mismatch: 1 });
    });

    it('should answer a type mismatch with a no-op counting type_mismatch, warned once', () => {
      const { wm, logs, sent } = setup();
      const m = wm.addMetric('HandlerTime', 'ms', undefined, 'counter');
      m.addOrUpdate(1, ['mlp', 'Model']);
      m.bind(['mlp', 'Model']).record(1);
      wm.getMetric('HandlerTime', 'histogram').addOrUpdate(1);
      expect(wm.dropped).to.deep.equal({ type_mismatch: 3 });
      expect(logs).to.deep.equal([
        "[METRICS]Metric 'HandlerTime' is declared as a gauge, not a counter; its datapoints are dropped and counted as type_mismatch",
      ]);
      wm.flush();
      expect(wire(sent[0])).to.deep.equal([[], [], [], []]);
    });

    it('should answer a dimension mismatch with a no-op counting bad_dimensions', () => {
      const { wm, logs } = setup();
      wm.addMetric('HandlerTime', 'ms', ['ModelName']).addOrUpdate(1, ['mlp']);
      expect(wm.dropped).to.deep.equal({ bad_dimensions: 1 });
      expect(logs).to.deep.equal([
        "[METRICS]Metric 'HandlerTime' has dimensions [ModelName, Level], not [ModelName]; its datapoints are dropped and counted as bad_dimensions",
      ]);
    });

    // Regression: the list's values were taken in the yaml's order, so HandlerTime got ModelName="Model", Level="mlp".
    it("should take a list of values in the order addMetric named the dimensions, not the yaml's", () => {
      const { wm, sent } = setup();
      const m = wm.addMetric('HandlerTime', 'ms', ['Level', 'ModelName'], 'gauge');
      expect(m.dimensions).to.deep.equal(['Level', 'ModelName']);
      m.addOrUpdate(1, ['Model', 'mlp']);
      m.bind(['Model', 'mlp']).record(2);
      m.addOrUpdate(3, { ModelName: 'mlp', Level: 'Model' }, 'req-1'); // by name: any order
      wm.addMetric('HandlerTime', 'ms', ['ModelName', 'Level']).addOrUpdate(4, ['mlp', 'Model']);
      m.addOrUpdate(5, ['Model']);
      wm.flush();
      expect(points(sent).map((p) => [p[1], p[2], p[3]])).to.deep.equal([
        [['mlp', 'Model'], 1, null],
        [['mlp', 'Model'], 2, null],
        [['mlp', 'Model'], 3, 'req-1'],
        [['mlp', 'Model'], 4, null],
      ]);
      expect(wm.dropped).to.deep.equal({ bad_dimensions: 1 });
      expect(wm.addMetric('HandlerTime', 'ms', ['Level', 'ModelName'])).to.equal(m);
    });

    // Regression: getMetric of a frontend metric was unknown_metric ("doesn't exist"); addCounter of it was forbidden_metric.
    it('should refuse getMetric and addMetric of a frontend metric as forbidden_metric, as the helpers do', () => {
      const { wm, logs } = setup({ autoDetect: true });
      wm.getMetric('Requests2XX', 'counter').addOrUpdate(1, ['Host']);
      wm.addMetric('Requests2XX', 'Count', ['Level'], 'counter').addOrUpdate(1, ['Host']);
      expect(wm.dropped).to.deep.equal({ forbidden_metric: 2 });
      expect(logs).to.deep.equal([
        "[METRICS]'Requests2XX' is a frontend (ts_metrics) metric; a worker records model metrics only; its datapoints are dropped and counted as forbidden_metric",
      ]);
    });

    it('should answer an unknown name with a counted no-op and never throw', () => {
      const { wm, logs } = setup();
      const m = wm.getMetric('Missing', 'gauge');
      m.addOrUpdate(1);
      m.bind().record(1);
      wm.addMetric('AlsoMissing', 'ms').addOrUpdate(1);
      wm.addCounter('Requests2XX', 1);
      expect(wm.dropped).to.deep.equal({ unknown_metric: 3, forbidden_metric: 1 });
      expect(logs).to.deep.equal([
        "[METRICS]Metric of type 'gauge' and name 'Missing' doesn't exist; its datapoints are dropped and counted as unknown_metric",
        "[METRICS]Metric 'AlsoMissing' is not declared under model_metrics and auto-detect is off; its datapoints are dropped and counted as unknown_metric",
        "[METRICS]'Requests2XX' is a frontend (ts_metrics) metric; a worker records model metrics only; its datapoints are dropped and counted as forbidden_metric",
      ]);
      expect(wm.getMetric('Missing', 'gauge')).to.equal(m);
    });
  });

  describe('hostile arguments', () => {
    it('should never throw into the handler: a Symbol name, dimensions that throw when read, a request id whose toString throws', () => {
      // Regression: each of these calls threw (a Symbol in a template string, Object.keys or a
      // getter of the handler's object, String() of the request id) out of the record API.
      const { wm, sent, logs } = setup();
      const throwing = new Proxy(
        {},
        {
          ownKeys: () => {
            throw new Error('ownKeys');
          },
          get: () => {
            throw new Error('get');
          },
        },
      );
      const throwingList = new Proxy([] as string[], {
        get: () => {
          throw new Error('get');
        },
      });
      const getter = {
        get ModelName(): string {
          throw new Error('getter');
        },
        Level: 'Model',
      };
      const badId = {
        toString: (): string => {
          throw new Error('toString');
        },
      } as unknown as string;
      const calls: Array<() => unknown> = [
        () => wm.getMetric(Symbol('s') as unknown as string).addOrUpdate(1),
        () => wm.addTime(Symbol('s') as unknown as string, 1, undefined, 'h' as 'ms'),
        () => wm.addCounter('InferenceCount', 1, undefined, throwing),
        () => wm.addCounter('Fresh', 1, undefined, throwing),
        () => wm.getMetric('HandlerTime').addOrUpdate(1, getter),
        () => wm.getMetric('HandlerTime').bind(throwing).record(1),
        () => wm.addMetric('HandlerTime', 'ms', throwingList).addOrUpdate(1),
        () => wm.getMetric('HandlerTime').addOrUpdate(2, ['mlp', 'Model'], badId),
      ];
      for (const call of calls) expect(call).to.not.throw();
      wm.getMetric('HandlerTime').addOrUpdate(3, ['mlp', 'Model'], 'req-1');
      // A numeric id is written as Python's str() of it would be, not dropped.
      wm.getMetric('HandlerTime').addOrUpdate(4, ['mlp', 'Model'], 17 as unknown as string);
      wm.flush();
      expect(points(sent).map((p) => [p[0], p[1], p[2], p[3]])).to.deep.equal([
        ['HandlerTime', ['mlp', 'Model'], 3, 'req-1'],
        ['HandlerTime', ['mlp', 'Model'], 4, '17'],
      ]);
      expect(wm.dropped).to.deep.equal({ unknown_metric: 1, bad_unit: 1, bad_dimensions: 5, bad_request_id: 1 });
      expect(logs).to.deep.equal([
        "[METRICS]Metric of type 'counter' and name 'Symbol(s)' doesn't exist; its datapoints are dropped and counted as unknown_metric",
        "[METRICS]Failed to update metric with name:Symbol(s): the unit for a timed metric should be one of ['ms', 's'] (bad_unit; further drops of this kind are counted, not logged)",
        '[METRICS]Failed to update metric with name:InferenceCount: Dimension values could not be read: ownKeys (bad_dimensions; further drops of this kind are counted, not logged)',
        '[METRICS]Failed to update metric with name:Fresh: Dimension values could not be read: ownKeys (bad_dimensions; further drops of this kind are counted, not logged)',
        '[METRICS]Failed to update metric with name:HandlerTime: Dimension values could not be read; they should correspond to Dimension names: [ModelName, Level] (bad_dimensions; further drops of this kind are counted, not logged)',
        '[METRICS]Failed to update metric with name:HandlerTime: request id object is not a string (bad_request_id; further drops of this kind are counted, not logged)',
      ]);
    });
  });

  describe('names that cannot be printed', () => {
    it('should count a helper or addMetric call named by an object without toString as unknown_metric, never throw', () => {
      // Regression: String(name) threw out of addCounter/addPercent into the handler, and addMetric
      // caught it but blamed the dimension names (bad_dimensions).
      const { wm, logs } = setup({ autoDetect: true });
      const bare = Object.create(null) as string;
      const calls: Array<() => unknown> = [
        () => wm.addCounter(bare, 1),
        () => wm.addPercent(bare, 1),
        () => wm.addMetric(bare, 'ms').addOrUpdate(1),
      ];
      for (const call of calls) expect(call).to.not.throw();
      expect(wm.dropped).to.deep.equal({ unknown_metric: 3 });
      expect(logs).to.deep.equal([
        '[METRICS]`metric_name` must be a non-empty string; its datapoints are dropped and counted as unknown_metric',
      ]);
    });
  });

  describe('values that are not numbers', () => {
    it('should drop them as not_finite and never throw, converted or not (an object without toString, one whose toString throws, a string)', () => {
      // Regression: String(value) in the drop message threw out of addOrUpdate for the first two, and
      // addTime('LatencyHist', '0.5', …, 's') was coerced by the unit conversion and recorded 500.
      const { wm, sent, logs } = setup();
      const bare = Object.create(null) as number;
      const throwing = {
        toString: (): string => {
          throw new Error('toString');
        },
      } as unknown as number;
      const calls: Array<() => unknown> = [
        () => wm.getMetric('HandlerTime').addOrUpdate(bare, ['mlp', 'Model']),
        () => wm.getMetric('HandlerTime').addOrUpdate(throwing, ['mlp', 'Model']),
        () => wm.addTime('LatencyHist', bare, undefined, 's'),
        () => wm.addTime('LatencyHist', '0.5' as unknown as number, undefined, 's'),
      ];
      for (const call of calls) expect(call).to.not.throw();
      wm.flush();
      expect([points(sent), wm.dropped]).to.deep.equal([[], { not_finite: 4 }]);
      expect(logs).to.deep.equal([
        '[METRICS]Failed to update metric with name:HandlerTime: value (unprintable value) is not a finite number (not_finite; further drops of this kind are counted, not logged)',
        '[METRICS]Failed to update metric with name:LatencyHist: value (unprintable value) is not a finite number (not_finite; further drops of this kind are counted, not logged)',
      ]);
    });
  });

  // Regression: a string or a bigint was logged as `value 1 is not a finite number`, which reads as a bug in the server.
  describe('values of another type', () => {
    it('should name a string or a bigint value as such in the not_finite warning', () => {
      const { wm, logs } = setup();
      wm.getMetric('HandlerTime').addOrUpdate('1' as unknown as number, ['mlp', 'Model']);
      wm.getMetric('PredictionTime').addOrUpdate(1n as unknown as number, ['mlp', 'Model']);
      wm.getMetric('LatencyHist').addOrUpdate(Infinity, ['mlp']);
      wm.getMetric('InferenceCount').addOrUpdate('7'.repeat(100_000) as unknown as number, ['mlp', 'Model', 'cpu']);
      expect(wm.dropped).to.deep.equal({ not_finite: 4 });
      expect(logs).to.deep.equal([
        '[METRICS]Failed to update metric with name:HandlerTime: value "1" is a string, not a number (not_finite; further drops of this kind are counted, not logged)',
        '[METRICS]Failed to update metric with name:PredictionTime: value 1n is a bigint, not a number (not_finite; further drops of this kind are counted, not logged)',
        '[METRICS]Failed to update metric with name:LatencyHist: value Infinity is not a finite number (not_finite; further drops of this kind are counted, not logged)',
        `[METRICS]Failed to update metric with name:InferenceCount: value "${'7'.repeat(64)}"… (100000 characters) is a string, not a number (not_finite; further drops of this kind are counted, not logged)`,
      ]);
    });
  });

  // Regression: a handler's request id of any length went into every log line and IPC message of the datapoint.
  describe('request ids', () => {
    it('should drop a datapoint whose request id is over 1024 characters as bad_request_id, saying how long', () => {
      const { wm, sent, logs } = setup();
      wm.getMetric('HandlerTime').addOrUpdate(1, ['mlp', 'Model'], 'r'.repeat(1024)); // at the bound: kept
      wm.getMetric('HandlerTime').addOrUpdate(2, ['mlp', 'Model'], 'r'.repeat(1_000_000));
      wm.addTime('PredictionTime', 3, 'r'.repeat(1025));
      wm.flush();
      expect([points(sent).map((p) => [p[0], p[2], p[3]?.length]), wm.dropped]).to.deep.equal([
        [['HandlerTime', 1, 1024]],
        { bad_request_id: 2 },
      ]);
      expect(logs).to.deep.equal([
        '[METRICS]Failed to update metric with name:HandlerTime: request id has 1000000 characters; at most 1024 are kept (bad_request_id; further drops of this kind are counted, not logged)',
        '[METRICS]Failed to update metric with name:PredictionTime: request id has 1025 characters; at most 1024 are kept (bad_request_id; further drops of this kind are counted, not logged)',
      ]);
    });
  });

  // Regression: with HandlerTime taken out of metrics.yaml (TorchServe's way to turn a metric off) the
  // worker's own record of it was an unknown_metric drop and a warning on every batch.
  describe('records', () => {
    it('should say whether a datapoint of the name would be recorded: declared and shown, or auto-detectable', () => {
      const hidden = { ...spec('Old', 'gauge', 'ms', []), hidden: true };
      const wm = new WorkerMetrics(config([spec('HandlerTime', 'gauge', 'ms', ['ModelName', 'Level']), hidden]), {
        modelName: 'mlp',
        send: () => undefined,
        nowMs: () => 0,
      });
      const auto = new WorkerMetrics(config([], { autoDetect: true }), {
        modelName: 'mlp',
        send: () => undefined,
        nowMs: () => 0,
      });
      expect([
        wm.records('HandlerTime'),
        wm.records('PredictionTime'),
        wm.records('Old'),
        auto.records('PredictionTime'),
      ]).to.deep.equal([true, false, false, true]);
      expect(
        createWorkerMetrics(config([spec('HandlerTime', 'gauge', 'ms', [])]), {
          modelName: 'mlp',
          send: () => undefined,
          enabled: false,
        }).records('HandlerTime'),
      ).to.equal(false);
    });
  });

  describe('TorchServe helpers', () => {
    it('should fill ModelName and Level when declared and not given, without leaking between calls', () => {
      const { wm, sent } = setup();
      wm.addTime('HandlerTime', 12.5);
      wm.addTime('HandlerTime', 3, undefined, 'ms', { Level: 'Error' });
      wm.addTime('HandlerTime', 4);
      wm.addCounter('InferenceCount', 2, undefined, { Device: 'cpu' });
      wm.addTime('LatencyHist', 7);
      wm.flush();
      expect(points(sent).map((p) => [p[0], p[1], p[2]])).to.deep.equal([
        ['HandlerTime', ['mlp', 'Model'], 12.5],
        ['HandlerTime', ['mlp', 'Error'], 3],
        ['HandlerTime', ['mlp', 'Model'], 4],
        ['InferenceCount', ['mlp', 'Model', 'cpu'], 2],
        ['LatencyHist', ['mlp'], 7],
      ]);
      expect(wm.dropped).to.deep.equal({});
    });

    it("should convert a time or size given in another unit of its kind to the metric's unit, and keep other values as given", () => {
      const { wm, sent } = setup({ autoDetect: true });
      wm.addTime('LatencyHist', 0.002, undefined, 's'); // declared in ms: 2 ms, not 0.002
      wm.addTime('LatencyHist', 0.043, undefined, 's'); // 43 ms, not 42.99999999999999
      wm.addTime('HandlerTime', 1.5, undefined, 'ms');
      wm.addSize('Mem', 2, undefined, 'MB'); // auto-detected in Megabytes by its first call
      wm.addSize('Mem', 512, undefined, 'kB');
      wm.addTime('InferenceCount', 3, undefined, 's', { Device: 'cpu' }, 'counter'); // declared Count: not a time, kept
      wm.flush();
      expect(points(sent).map((p) => [p[0], p[2]])).to.deep.equal([
        ['LatencyHist', 2],
        ['LatencyHist', 43],
        ['HandlerTime', 1.5],
        ['Mem', 2],
        ['Mem', 0.5],
        ['InferenceCount', 3],
      ]);
      expect(wm.dropped).to.deep.equal({});
    });

    it('should convert to a metric declared in another spelling of a time unit (unit: sec, msec)', () => {
      const sent: MetricsMessage[] = [];
      const wm = new WorkerMetrics(config([spec('Sec', 'histogram', 'sec', []), spec('Msec', 'gauge', 'msec', [])]), {
        modelName: 'mlp',
        send: (m) => sent.push(copy(m)),
        nowMs: () => 0,
      });
      wm.addTime('Sec', 5, undefined, 'ms'); // 0.005 s, not 5 s
      wm.addTime('Msec', 0.25, undefined, 's');
      wm.flush();
      expect(points(sent).map((p) => [p[0], p[2]])).to.deep.equal([
        ['Sec', 0.005],
        ['Msec', 250],
      ]);
    });

    // Regression: addTime into a metric declared in kB recorded the milliseconds as kilobytes.
    it('should drop a time, size or percent recorded into a metric that measures another of them as bad_unit', () => {
      const sent: MetricsMessage[] = [];
      const logs: string[] = [];
      const wm = new WorkerMetrics(
        config([
          spec('Size', 'gauge', 'kB', []),
          spec('Time', 'gauge', 'ms', []),
          spec('Pct', 'histogram', 'Percent', []),
          spec('Calls', 'counter', 'CallCount', []),
          spec('Odd', 'gauge', 'request', []),
        ]),
        {
          modelName: 'mlp',
          send: (m) => sent.push(copy(m)),
          log: (m) => logs.push(m),
          nowMs: () => 0,
        },
      );
      wm.addTime('Size', 5);
      wm.addPercent('Size', 5);
      wm.addSize('Time', 5, undefined, 'kB');
      wm.addTime('Pct', 5, undefined, 's', undefined, 'histogram');
      wm.addTime('Calls', 5, undefined, 'ms', undefined, 'counter'); // a count of no measure: kept, as TorchServe
      wm.addPercent('Odd', 5); // a unit of its own: kept as given
      wm.flush();
      expect(points(sent).map((p) => [p[0], p[2]])).to.deep.equal([
        ['Calls', 5],
        ['Odd', 5],
      ]);
      expect(wm.dropped).to.deep.equal({ bad_unit: 4 });
      expect(logs).to.deep.equal([
        '[METRICS]Failed to update metric with name:Size: it is declared in kB (a size); addTime records a time in ms, ' +
          'which would be read as kB (bad_unit; further drops of this kind are counted, not logged)',
        '[METRICS]Failed to update metric with name:Time: it is declared in ms (a time); addSize records a size in kB, ' +
          'which would be read as ms (bad_unit; further drops of this kind are counted, not logged)',
        '[METRICS]Failed to update metric with name:Pct: it is declared in Percent (a percentage); addTime records a time in s, ' +
          'which would be read as Percent (bad_unit; further drops of this kind are counted, not logged)',
      ]);
    });

    // Regression: TorchServe's dimensions=[Dimension(name, value)] written as a list was read by its
    // indexes: an undeclared metric was refused for a label named "0", a declared one blamed its values.
    it('should drop dimensions that are a list or a string as bad_dimensions, saying to write an object', () => {
      const { wm, sent, logs } = setup({ autoDetect: true });
      wm.addTime('MethodTime', 1, undefined, 'ms', [{ name: 'MethodName', value: 'pre' }] as unknown as Record<
        string,
        string
      >);
      wm.addCounter('InferenceCount', 1, undefined, 'cpu' as unknown as Record<string, string>);
      wm.addPercent('HandlerTime', 1, undefined, ['x'] as unknown as Record<string, string>);
      wm.flush();
      expect([points(sent), wm.dropped]).to.deep.equal([[], { bad_dimensions: 3 }]);
      const tail = ' (bad_dimensions; further drops of this kind are counted, not logged)';
      expect(logs).to.deep.equal([
        '[METRICS]Failed to update metric with name:MethodTime: dimensions must be an object of name: value ' +
          "(e.g. {MethodName: 'preprocess'}; TorchServe's [Dimension(name, value)]), not a list" +
          tail,
        '[METRICS]Failed to update metric with name:InferenceCount: dimensions must be an object of name: value ' +
          "(e.g. {MethodName: 'preprocess'}; TorchServe's [Dimension(name, value)]), not a string" +
          tail,
        '[METRICS]Failed to update metric with name:HandlerTime: dimensions must be an object of name: value ' +
          "(e.g. {MethodName: 'preprocess'}; TorchServe's [Dimension(name, value)]), not a list" +
          tail,
      ]);
    });

    // Regression: the warning did not say which metric, nor what it was given.
    it('should name the metric and what it got when addMetric is given dimension names that are not a list', () => {
      const { wm, logs } = setup({ autoDetect: true });
      wm.addMetric('Fresh', 'ms', 'ModelName' as unknown as string[], 'gauge').addOrUpdate(1, ['mlp']);
      expect(wm.dropped).to.deep.equal({ bad_dimensions: 1 });
      expect(logs).to.deep.equal([
        '[METRICS]Metric \'Fresh\' cannot be auto-detected: its dimension names should be a list of strings, not "ModelName"; ' +
          'its datapoints are dropped and counted as bad_dimensions',
      ]);
    });

    // Regression: addTime('T', 5, 1) wrote requestID:1; TorchServe's helpers take idx, the request's index in the batch.
    it("should read a helper's numeric request id as an index into the batch, as TorchServe's idx", () => {
      const { wm, sent } = setup();
      wm.setRequestIds(['req-a', 'req-b']);
      wm.addTime('HandlerTime', 1, 1);
      wm.addTime('HandlerTime', 2, 0);
      wm.addTime('HandlerTime', 3, 2); // no such index: the batch's ids, as TorchServe
      wm.addTime('HandlerTime', 4, 0.5);
      wm.addTime('HandlerTime', 5, 'req-b');
      wm.flush();
      expect(points(sent).map((p) => [p[2], p[3]])).to.deep.equal([
        [1, 'req-b'],
        [2, 'req-a'],
        [3, 'req-a,req-b'],
        [4, 'req-a,req-b'],
        [5, 'req-b'],
      ]);
      expect(wm.dropped).to.deep.equal({});
    });

    // Regression: the warning printed String() of the value: "[object Object]", or a list of 100000 names in one 1.4 MB line.
    it('should describe a dimension name that is not a string by its kind, in a short warning', () => {
      const { wm, logs } = setup({ autoDetect: true });
      wm.addMetric('X', 'ms', [{ a: 1 }] as unknown as string[], 'gauge').addOrUpdate(1, ['a']);
      wm.addMetric(
        'Y',
        'ms',
        [Array.from({ length: 100_000 }, (_, i) => `name${i}`)] as unknown as string[],
        'gauge',
      ).addOrUpdate(1, ['a']);
      wm.addMetric('Z', 'ms', ['ok', 5] as unknown as string[], 'gauge').addOrUpdate(1, ['a', 'b']);
      expect(wm.dropped).to.deep.equal({ invalid_name: 3 });
      expect(logs).to.deep.equal([
        "[METRICS]Metric 'X' cannot be auto-detected: dimension 1 is a mapping, not a string; its datapoints are dropped and counted as invalid_name",
        "[METRICS]Metric 'Y' cannot be auto-detected: dimension 1 is a list, not a string; its datapoints are dropped and counted as invalid_name",
        "[METRICS]Metric 'Z' cannot be auto-detected: dimension 2 is 5, not a string; its datapoints are dropped and counted as invalid_name",
      ]);
    });

    // Regression: a handler inventing names of 1 MiB kept 1000 of them in its warning and no-op
    // tables (2 GB of heap) and logged each whole (1 GB); a 1 MiB valid name was auto-detected.
    it('should cut long names in warnings and keys, and refuse to auto-detect a name over 256 characters', () => {
      const { wm, logs } = setup({ autoDetect: true });
      const long = (i: number): string => `${'N'.repeat(1 << 20)}${i}`;
      for (let i = 0; i < 3; i++) wm.getMetric(long(i), 'gauge').addOrUpdate(1);
      wm.addCounter(long(9), 1);
      wm.addMetric('A'.repeat(257), 'ms', [], 'gauge').addOrUpdate(1);
      wm.addMetric('Fine', 'ms', ['D'.repeat(257)], 'gauge').addOrUpdate(1, ['x']);
      wm.addMetric('A'.repeat(256), 'ms', [], 'gauge').addOrUpdate(1); // at the bound: detected
      expect(wm.dropped).to.deep.equal({ unknown_metric: 3, invalid_name: 3 });
      const cut = `${'N'.repeat(200)}… (1048577 characters)`;
      expect(logs).to.deep.equal([
        `[METRICS]Metric of type 'gauge' and name '${cut}' doesn't exist; its datapoints are dropped and counted as unknown_metric`,
        `[METRICS]Metric '${cut}' cannot be auto-detected: name has 1048577 characters, more than 256; shorten it; its datapoints are dropped and counted as invalid_name`,
        `[METRICS]Metric '${'A'.repeat(200)}… (257 characters)' cannot be auto-detected: name has 257 characters, more than 256; shorten it; its datapoints are dropped and counted as invalid_name`,
        "[METRICS]Metric 'Fine' cannot be auto-detected: dimension 1 has 257 characters, more than 256; shorten it; its datapoints are dropped and counted as invalid_name",
      ]);
      expect(logs.every((l) => l.length < 400)).to.equal(true);
    });

    // Regression: the warning quoted every value: 100000 of them made one 1.6 MB log line.
    it('should cut the values and names quoted in a dimension warning to 200 characters', () => {
      const { wm, logs } = setup();
      const many = Array.from({ length: 100_000 }, (_, i) => `v${i}`);
      wm.getMetric('HandlerTime').addOrUpdate(1, many);
      wm.addMetric('PredictionTime', 'ms', many).addOrUpdate(1, ['mlp', 'Model']);
      expect(wm.dropped).to.deep.equal({ bad_dimensions: 2 });
      const values = JSON.stringify(many);
      expect(logs).to.deep.equal([
        `[METRICS]Failed to update metric with name:HandlerTime: Dimension values ${values.slice(0, 200)}… (${values.length} characters) should correspond to Dimension names: [ModelName, Level] (bad_dimensions; further drops of this kind are counted, not logged)`,
        `[METRICS]Metric 'PredictionTime' has dimensions [ModelName, Level], not [${many.join(', ').slice(0, 200)}… (${many.join(', ').length} characters)]; its datapoints are dropped and counted as bad_dimensions`,
      ]);
    });

    it('should drop bad units as bad_unit with TorchServe messages and never throw', () => {
      const { wm, logs } = setup({ autoDetect: true });
      wm.addTime('T', 1, undefined, 'ns' as 'ms');
      wm.addTime('T', 1, undefined, 'ns' as 'ms');
      wm.addSize('S', 1, undefined, 'TB' as 'MB');
      expect(wm.dropped).to.deep.equal({ bad_unit: 3 });
      expect(logs).to.deep.equal([
        "[METRICS]Failed to update metric with name:T: the unit for a timed metric should be one of ['ms', 's'] " +
          '(bad_unit; further drops of this kind are counted, not logged)',
        "[METRICS]Failed to update metric with name:S: The unit for size based metric is one of ['MB','kB', 'GB', 'B'] " +
          '(bad_unit; further drops of this kind are counted, not logged)',
      ]);
      expect(wm.flush()).to.equal(0);
    });

    it('should reject addCounter on a declared gauge but let addTime take a declared histogram', () => {
      const { wm } = setup();
      wm.addCounter('HandlerTime', 1);
      wm.addTime('LatencyHist', 5);
      wm.addTime('LatencyHist', 5, undefined, 'ms', undefined, 'gauge');
      expect(wm.dropped).to.deep.equal({ type_mismatch: 2 });
      expect(wm.flush()).to.equal(1);
    });
  });

  describe('auto-detect', () => {
    it('should register an undeclared metric with mapped unit, default type and default dims, declared once', () => {
      const { wm, sent } = setup({ autoDetect: true });
      wm.addTime('PreprocessTime', 3, undefined, 's', { Stage: 'pre' });
      wm.addTime('PreprocessTime', 4, undefined, 's', { Stage: 'pre' });
      wm.addSize('Mem', 2, undefined, 'GB');
      wm.addPercent('Util', 50);
      wm.addCounter('Hits', 1);
      wm.addMetric('Custom', '', ['A'], 'histogram').addOrUpdate(9, { A: 'x' });
      wm.addMetric('Odd', 'custom_unit').addOrUpdate(1);
      wm.flush();
      expect(sent[0].metrics).to.deep.equal([
        { name: 'PreprocessTime', type: 'gauge', unit: 'Seconds', dimensions: ['Stage', 'ModelName', 'Level'] },
        { name: 'Mem', type: 'gauge', unit: 'Gigabytes', dimensions: ['ModelName', 'Level'] },
        { name: 'Util', type: 'gauge', unit: 'Percent', dimensions: ['ModelName', 'Level'] },
        { name: 'Hits', type: 'counter', unit: 'Count', dimensions: ['ModelName', 'Level'] },
        { name: 'Custom', type: 'histogram', unit: 'unit', dimensions: ['A'] },
        { name: 'Odd', type: 'counter', unit: 'custom_unit', dimensions: [] },
      ]);
      expect(points(sent).map((p) => [p[0], p[1], p[2]])).to.deep.equal([
        ['PreprocessTime', ['pre', 'mlp', 'Model'], 3],
        ['PreprocessTime', ['pre', 'mlp', 'Model'], 4],
        ['Mem', ['mlp', 'Model'], 2],
        ['Util', ['mlp', 'Model'], 50],
        ['Hits', ['mlp', 'Model'], 1],
        ['Custom', ['x'], 9],
        ['Odd', [], 1],
      ]);
      wm.addTime('PreprocessTime', 5, undefined, 's', { Stage: 'pre' });
      wm.flush();
      expect(sent[1].metrics).to.deep.equal([]);
      expect(sent[1].series).to.deep.equal([]);
      expect(points(sent).length).to.equal(8);
    });

    it('should refuse a type that is not counter, gauge or histogram, so the flush stays valid for the frontend', () => {
      // Regression: the metric was registered with type "histo" and declared in the flush, and
      // the frontend refused the whole message, the series of every other metric with it.
      const { wm, sent, logs } = setup({ autoDetect: true });
      wm.addTime('Lat', 5, undefined, 'ms', undefined, 'histo' as 'gauge');
      wm.addMetric('Sum', 'ms', [], 'summary' as 'gauge').addOrUpdate(1);
      wm.addCounter('Hits', 1);
      wm.flush();
      expect(sent[0].metrics).to.deep.equal([
        { name: 'Hits', type: 'counter', unit: 'Count', dimensions: ['ModelName', 'Level'] },
      ]);
      expect(points(sent).map((p) => [p[0], p[1], p[2]])).to.deep.equal([['Hits', ['mlp', 'Model'], 1]]);
      expect(sent[0].dropped).to.deep.equal({ type_mismatch: 2 });
      expect('error' in decodeMetricsMessage(sent[0])).to.equal(false);
      expect(logs).to.deep.equal([
        '[METRICS]Metric \'Lat\' cannot be auto-detected: type "histo" is not counter, gauge or histogram; its datapoints are dropped and counted as type_mismatch',
        '[METRICS]Metric \'Sum\' cannot be auto-detected: type "summary" is not counter, gauge or histogram; its datapoints are dropped and counted as type_mismatch',
      ]);
    });

    it('should treat a detected metric like a declared one afterwards (type checks apply)', () => {
      const { wm } = setup({ autoDetect: true });
      wm.addCounter('Hits', 1);
      wm.addTime('Hits', 1, undefined, 'ms', undefined, 'gauge');
      expect(wm.getMetric('Hits', 'counter').unit).to.equal('Count');
      expect(wm.dropped).to.deep.equal({ type_mismatch: 1 });
    });
  });

  describe('request ids', () => {
    it('should stamp the batch ids joined by a comma, prefer an explicit id, else none', () => {
      const { wm, sent } = setup();
      const s = wm.getMetric('NoDims').bind();
      s.record(1);
      wm.setRequestIds(['req-a', 'req-b']);
      s.record(2);
      wm.getMetric('NoDims').addOrUpdate(3, [], 'req-x');
      wm.getMetric('NoDims').addOrUpdate(4);
      wm.flush();
      s.record(5);
      wm.setRequestIds([]);
      s.record(6);
      wm.flush();
      expect(sent[0].requestIds).to.deep.equal(['req-a,req-b', 'req-x']);
      expect(sent[1].requestIds).to.deep.equal(['req-a,req-b']);
      // An explicit id is a one-datapoint run in the middle of the batch's run, which resumes.
      expect(wire(sent[0])[2]).to.deep.equal([0, -1, 1, 0, 2, 1, 3, 0]);
      expect(wire(sent[1])[2]).to.deep.equal([0, 0, 1, -1]);
      expect(points(sent).map((p) => [p[2], p[3]])).to.deep.equal([
        [1, null],
        [2, 'req-a,req-b'],
        [3, 'req-x'],
        [4, 'req-a,req-b'],
        [5, 'req-a,req-b'],
        [6, null],
      ]);
    });
  });

  describe('time', () => {
    it('should stamp the cached clock, refreshed on setRequestIds and flush only (no clock read per record)', () => {
      const { wm, sent, clock } = setup();
      const s = wm.getMetric('NoDims').bind();
      clock.now = 1000;
      s.record(1); // still the construction time
      wm.setRequestIds(['r']);
      clock.now = 2000;
      s.record(2); // 1000, from setRequestIds
      wm.getMetric('NoDims').addOrUpdate(3); // 1000: unbound records read no clock either
      clock.now = 3000;
      s.record(4); // 1000
      wm.flush(); // refresh to 3000
      s.record(5);
      wm.flush();
      expect(points(sent).map((p) => p[4])).to.deep.equal([1_700_000_000_000, 1000, 1000, 1000, 3000]);
      // The time changed mid-flush: a second run from datapoint 1; the next flush starts afresh.
      expect(sent.map((m) => Array.from(m.timeRuns))).to.deep.equal([
        [0, 1_700_000_000_000, 1, 1000],
        [0, 3000],
      ]);
    });
  });

  describe('runs', () => {
    it('should keep runs minimal: a repeated id or time opens none, and a run that got no datapoint is replaced', () => {
      const { wm, sent, clock } = setup();
      const s = wm.getMetric('NoDims').bind();
      const m = wm.getMetric('NoDims');
      wm.setRequestIds(['a']);
      s.record(1);
      wm.setRequestIds(['a']); // same batch ids, same clock: no new run
      m.addOrUpdate(2, [], 'a'); // the explicit id is the batch's: no new run
      m.addOrUpdate(3, [], 'x');
      m.addOrUpdate(4, [], 'x'); // two explicit datapoints in a row: one run
      clock.now = 5;
      wm.setRequestIds(['b']); // no datapoint in this batch: its runs are replaced
      clock.now = 6;
      wm.setRequestIds(['c']);
      s.record(5);
      wm.flush();
      expect(sent[0].requestIds).to.deep.equal(['a', 'x', 'b', 'c']);
      expect(wire(sent[0])).to.deep.equal([
        [0, 0, 0, 0, 0],
        [1, 2, 3, 4, 5],
        [0, 0, 2, 1, 4, 3],
        [0, 1_700_000_000_000, 4, 6],
      ]);
      expect(points(sent).map((p) => [p[2], p[3], p[4]])).to.deep.equal([
        [1, 'a', 1_700_000_000_000],
        [2, 'a', 1_700_000_000_000],
        [3, 'x', 1_700_000_000_000],
        [4, 'x', 1_700_000_000_000],
        [5, 'c', 6],
      ]);
    });

    it('should split runs at the cap: the batch id carries on into the next message, with the refreshed time', () => {
      const { wm, sent, clock } = setup({ maxPointsPerFlush: 4 });
      const s = wm.getMetric('NoDims').bind();
      const m = wm.getMetric('NoDims');
      clock.now = 100;
      wm.setRequestIds(['b']);
      s.record(1);
      m.addOrUpdate(2, [], 'x');
      s.record(3);
      s.record(4); // full
      clock.now = 200;
      s.record(5); // flushes the four first, by itself
      m.addOrUpdate(6, [], 'x');
      s.record(7);
      s.record(8); // full
      m.addOrUpdate(9, [], 'y'); // flushes by itself; an explicit id at the cap
      s.record(10);
      wm.flush();
      expect(sent.map((x) => [x.requestIds, ...wire(x)])).to.deep.equal([
        [
          ['b', 'x'],
          [0, 0, 0, 0],
          [1, 2, 3, 4],
          [0, 0, 1, 1, 2, 0],
          [0, 100],
        ],
        [
          ['b', 'x'],
          [0, 0, 0, 0],
          [5, 6, 7, 8],
          [0, 0, 1, 1, 2, 0],
          [0, 200],
        ],
        [
          ['b', 'y'],
          [0, 0],
          [9, 10],
          [0, 1, 1, 0],
          [0, 200],
        ],
      ]);
      expect(points(sent).map((p) => [p[2], p[3], p[4]])).to.deep.equal([
        [1, 'b', 100],
        [2, 'x', 100],
        [3, 'b', 100],
        [4, 'b', 100],
        [5, 'b', 200],
        [6, 'x', 200],
        [7, 'b', 200],
        [8, 'b', 200],
        [9, 'y', 200],
        [10, 'b', 200],
      ]);
    });

    it('should grow the run arrays past their first size when every datapoint has its own request id', () => {
      const { wm, sent } = setup({ maxPointsPerFlush: 100 });
      const m = wm.getMetric('NoDims');
      wm.setRequestIds(['batch']);
      for (let i = 0; i < 100; i++) m.addOrUpdate(i, [], `r${i % 2}`);
      wm.flush();
      expect(sent[0].requestIds).to.deep.equal(['batch', 'r0', 'r1']);
      expect(Array.from(sent[0].requestRuns)).to.deep.equal(
        Array.from({ length: 100 }, (_, i) => [i, 1 + (i % 2)]).flat(),
      );
      expect(points(sent).map((p) => p[3])).to.deep.equal(Array.from({ length: 100 }, (_, i) => `r${i % 2}`));
    });
  });

  describe('flush', () => {
    it('should send nothing and return 0 when nothing is buffered, and number messages from 0', () => {
      const { wm, sent } = setup();
      expect(wm.flush()).to.equal(0);
      wm.getMetric('NoDims').bind().record(1);
      expect(wm.flush()).to.equal(1);
      wm.getMetric('NoDims').bind().record(1);
      expect(wm.flush()).to.equal(1);
      expect(sent.map((m) => [m.type, m.v, m.seq])).to.deep.equal([
        ['tsserve.metrics', 3, 0],
        ['tsserve.metrics', 3, 1],
      ]);
    });

    it('should grow by doubling up to maxPointsPerFlush, then flush by itself without losing a point', () => {
      const { wm, sent } = setup({ maxPointsPerFlush: 600 });
      const s = wm.getMetric('NoDims').bind();
      for (let i = 1; i <= 1500; i++) s.record(i);
      expect(sent.map((m) => m.values.length)).to.deep.equal([600, 600]);
      expect(wm.flush()).to.equal(300);
      const values = points(sent).map((p) => p[2]);
      expect(values.length).to.equal(1500);
      expect(values.reduce((a, b) => a + b, 0)).to.equal((1500 * 1501) / 2);
      expect(values[0]).to.equal(1);
      expect(values[1499]).to.equal(1500);
    });

    it('should swap two buffers: a sent view stays intact until the next flush, then its buffer is reused', () => {
      const sent: MetricsMessage[] = [];
      const clock = { now: 10 };
      const wm = new WorkerMetrics(config([spec('C', 'counter', 'Count', [])], { maxPointsPerFlush: 4 }), {
        modelName: 'm',
        send: (m) => sent.push(m),
        log: () => undefined,
        nowMs: () => clock.now,
      });
      const s = wm.getMetric('C').bind();
      wm.setRequestIds(['r']);
      s.record(1);
      wm.flush(); // views of the A arrays, 1 datapoint
      clock.now = 20;
      wm.setRequestIds(['q']);
      for (let i = 0; i < 4; i++) s.record(2); // fills the B arrays exactly; A is untouched
      expect(wire(sent[0])).to.deep.equal([[0], [1], [0, 0], [0, 10]]);
      wm.flush(); // hands over B, writes go to A again
      clock.now = 30;
      wm.setRequestIds(['p']);
      s.record(3);
      expect(wire(sent[1])).to.deep.equal([
        [0, 0, 0, 0],
        [2, 2, 2, 2],
        [0, 1],
        [0, 20],
      ]);
      const buffers = (m: MetricsMessage): ArrayBufferLike[] => [
        m.seriesIds.buffer,
        m.values.buffer,
        m.requestRuns.buffer,
        m.timeRuns.buffer,
      ];
      expect(buffers(sent[0]).map((b, i) => b === buffers(sent[1])[i])).to.deep.equal([false, false, false, false]);
      wm.flush();
      expect(buffers(sent[2]).map((b, i) => b === buffers(sent[0])[i])).to.deep.equal([true, true, true, true]);
      expect(wire(sent[0])).to.deep.equal([[0], [3], [0, 1], [0, 30]]); // A recycled
    });

    it('should declare each series once, in the flush that first uses it', () => {
      const { wm, sent } = setup();
      const a = wm.getMetric('HandlerTime').bind(['mlp', 'Model']);
      wm.flush();
      a.record(1);
      wm.getMetric('HandlerTime').addOrUpdate(2, ['mlp', 'Model']);
      wm.flush();
      wm.getMetric('HandlerTime').addOrUpdate(3, ['mlp', 'X']);
      wm.flush();
      expect(sent.map((m) => m.series)).to.deep.equal([
        [{ id: 0, metric: 'HandlerTime', values: ['mlp', 'Model'] }],
        [],
        [{ id: 1, metric: 'HandlerTime', values: ['mlp', 'X'] }],
      ]);
    });

    it('should log and keep going when send throws', () => {
      const logs: string[] = [];
      const wm = new WorkerMetrics(config([spec('C', 'counter', 'Count', [])]), {
        modelName: 'm',
        send: () => {
          throw new Error('channel closed');
        },
        log: (m) => logs.push(m),
      });
      wm.getMetric('C').bind().record(1);
      expect(wm.flush()).to.equal(1);
      expect(logs).to.deep.equal(['[METRICS]Failed to send 1 datapoints to the frontend: channel closed']);
    });
  });
});
