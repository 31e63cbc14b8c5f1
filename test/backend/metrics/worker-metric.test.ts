/**
 * A model metric in the worker cache (backend/metrics/worker-metric.ts): binding dimension values,
 * checking values and request ids, and never throwing into the handler whatever it passes.
 */
import { expect } from 'chai';
import { setup, wire, points } from './support.js';

describe('LiveMetric and its series (backend/metrics/worker-metric.ts), through the cache', () => {
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
});
