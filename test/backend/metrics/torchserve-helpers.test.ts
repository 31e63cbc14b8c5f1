/**
 * TorchServe's helpers in the worker cache (backend/metrics/torchserve-helpers.ts): addCounter,
 * addTime, addSize and addPercent, their default dimensions, units and request indexes.
 */
import { expect } from 'chai';
import { WorkerMetrics } from '../../../backend/metrics/index.js';
import type { MetricsMessage } from '../../../schema/ipc.js';
import { config, spec } from './config.js';
import { setup, copy, points } from './support.js';

describe('TorchServeHelpers (backend/metrics/torchserve-helpers.ts), through the cache', () => {
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
});
