/**
 * The worker cache's registry (backend/metrics/metric-registry.ts): declared metrics by name and
 * type, what `records` answers, and metrics auto-detected from a handler's first use.
 */
import { expect } from 'chai';
import { createWorkerMetrics, WorkerMetrics } from '../../../backend/metrics/index.js';
import { decodeMetricsMessage } from '../../../schema/ipc.js';
import { config, spec } from './config.js';
import { setup, wire, points } from './support.js';

describe('MetricRegistry (backend/metrics/metric-registry.ts), through the cache', () => {
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
});
