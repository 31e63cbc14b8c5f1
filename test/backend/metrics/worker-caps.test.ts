import { expect } from 'chai';
import { WorkerMetrics, createWorkerMetrics } from '../../../backend/metrics/index.js';
import type { MetricsMessage } from '../../../schema/ipc.js';
import type { MetricsConfig } from '../../../schema/types.js';
import { config, MODEL_SPECS, spec } from './config.js';

/** A cache whose send is a fake channel: it answers `congested` and keeps the done callbacks. */
function setup(cfg: MetricsConfig, opts: { enabled?: boolean } = {}) {
  const sent: MetricsMessage[] = [];
  const logs: string[] = [];
  const done: Array<() => void> = [];
  const channel = { congested: false };
  const wm = createWorkerMetrics(cfg, {
    modelName: 'mlp',
    log: (m) => logs.push(m),
    nowMs: () => 1_700_000_000_000,
    enabled: opts.enabled,
    send: (m, cb) => {
      sent.push({ ...m, seriesIds: m.seriesIds.slice(), values: m.values.slice() });
      done.push(cb);
      return !channel.congested;
    },
  });
  return { wm, sent, logs, done, channel };
}

describe('WorkerMetrics caps', () => {
  it('should count each fold into the overflow series and carry the counts in the next flush only', () => {
    const { wm, sent } = setup(config(MODEL_SPECS, { maxSeriesPerMetric: 2 }));
    const m = wm.getMetric('InferenceCount');
    for (const device of ['a', 'b', 'c', 'd', 'c'])
      m.addOrUpdate(1, { ModelName: 'mlp', Level: 'Model', Device: device });
    m.bind(['mlp', 'Model', 'e']).record(1);
    wm.flush();
    m.addOrUpdate(1, ['mlp', 'Model', 'a']);
    wm.flush();
    expect(sent.map((s) => s.overflowed)).to.deep.equal([{ InferenceCount: 4 }, {}]);
    expect(sent[0]?.series.map((s) => s.values.join('/'))).to.deep.equal([
      'mlp/Model/a',
      'mlp/Model/b',
      '__overflow__/__overflow__/__overflow__',
    ]);
  });

  it('should keep points while the channel is congested, count what the bounded backlog cannot hold, and send on drain', () => {
    const { wm, sent, done, channel, logs } = setup(config(MODEL_SPECS, { maxPointsPerFlush: 4 }));
    const s = wm.getMetric('NoDims').bind();
    s.record(1);
    channel.congested = true;
    expect(wm.flush()).to.equal(1); // this send reports back-pressure
    channel.congested = false;
    for (let i = 0; i < 7; i++) s.record(10 + i); // 4 fit, 3 are dropped
    expect(wm.flush()).to.equal(0); // still waiting for the drain: nothing sent
    expect(sent.length).to.equal(1);
    done[0]!(); // the congested message was written: the backlog goes out
    expect(sent.length).to.equal(2);
    expect(Array.from(sent[1]!.values)).to.deep.equal([10, 11, 12, 13]);
    expect(sent[1]!.dropped).to.deep.equal({ ipc_backpressure: 3 });
    expect(wm.dropped).to.deep.equal({ ipc_backpressure: 3 });
    expect(logs).to.deep.equal([
      '[METRICS]Dropped a datapoint: the IPC channel to the frontend is congested and the backlog is full ' +
        '(ipc_backpressure; further drops of this kind are counted, not logged)',
    ]);
  });

  it('should send while congested when forced (shutdown)', () => {
    const { wm, sent, channel } = setup(config(MODEL_SPECS));
    channel.congested = true;
    wm.getMetric('NoDims').addOrUpdate(1);
    wm.flush();
    wm.getMetric('NoDims').addOrUpdate(2);
    expect([wm.flush(), wm.flush(true)]).to.deep.equal([0, 1]);
    expect(sent.map((m) => Array.from(m.values))).to.deep.equal([[1], [2]]);
  });

  it('should record nothing and send no metrics message when metrics are off', () => {
    const { wm, sent, logs } = setup(config(MODEL_SPECS, { autoDetect: true }), { enabled: false });
    expect(wm).to.not.be.instanceOf(WorkerMetrics);
    wm.getMetric('NoDims').addOrUpdate(1);
    wm.addMetric('Auto', 'ms').bind().record(1);
    wm.addCounter('Requests2XX', 1);
    wm.addTime('HandlerTime', 1);
    expect([wm.flush(), wm.flush(true)]).to.deep.equal([0, 0]);
    expect([sent, logs, wm.dropped]).to.deep.equal([[], [], {}]);
  });

  it('should not throw with metrics off either: a Symbol name, a unit whose toString throws', () => {
    // Regression: String(unit) threw out of addMetric into the handler.
    const { wm } = setup(config(MODEL_SPECS), { enabled: false });
    const badUnit = {
      toString: (): string => {
        throw new Error('toString');
      },
    } as unknown as string;
    const m = wm.addMetric(Symbol('s') as unknown as string, badUnit);
    expect([m.name, m.unit]).to.deep.equal(['Symbol(s)', '(unprintable value)']);
    expect(wm.getMetric(Symbol('t') as unknown as string).name).to.equal('Symbol(t)');
  });

  it('should make a hidden metric a silent no-op: nothing sent, nothing counted', () => {
    const hidden = { ...spec('Old', 'counter', 'Count', []), hidden: true };
    const { wm, sent, logs } = setup(config([...MODEL_SPECS, hidden], { autoDetect: true }));
    wm.getMetric('Old').addOrUpdate(1);
    wm.getMetric('Old', 'gauge').addOrUpdate(1);
    wm.addCounter('Old', 1);
    wm.addMetric('Old', 'Count', ['X']).bind().record(-1);
    expect([wm.flush(), sent, logs, wm.dropped]).to.deep.equal([0, [], [], {}]);
  });

  it('should refuse an auto-detected name the loader would refuse, with the reason, and cap auto-detection', () => {
    const cfg = {
      ...config(MODEL_SPECS, { autoDetect: true }),
      limits: { maxSeriesPerMetric: 10, maxPointsPerFlush: 100, maxAutoDetectedMetrics: 1 },
    };
    const { wm, sent, logs } = setup(cfg);
    wm.addMetric('bad-name', 'Count').addOrUpdate(1);
    wm.addMetric('tsserve_series', 'Count').addOrUpdate(1);
    wm.addMetric('Lat', 'ms', ['le'], 'histogram').addOrUpdate(1, ['x']);
    wm.addMetric('First', 'Count').addOrUpdate(1);
    wm.addMetric('Second', 'Count').addOrUpdate(1);
    expect(wm.dropped).to.deep.equal({ invalid_name: 3, auto_detect_cap: 1 });
    expect(logs).to.deep.equal([
      '[METRICS]Metric \'bad-name\' cannot be auto-detected: name "bad-name" is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); use letters, digits, _ and :, e.g. "bad_name"; its datapoints are dropped and counted as invalid_name',
      '[METRICS]Metric \'tsserve_series\' cannot be auto-detected: names starting with "tsserve_" are reserved for tsserve\'s self-metrics; rename it (e.g. "series"); its datapoints are dropped and counted as invalid_name',
      '[METRICS]Metric \'Lat\' cannot be auto-detected: dimension "le" is reserved for histogram bucket bounds in Prometheus; rename it; its datapoints are dropped and counted as invalid_name',
      "[METRICS]Metric 'Second' cannot be auto-detected: limits.max_auto_detected_metrics (1) reached; its datapoints are dropped and counted as auto_detect_cap",
    ]);
    wm.flush();
    expect(sent[0]?.metrics.map((m) => m.name)).to.deep.equal(['First']);
    expect(sent[0]?.dropped).to.deep.equal({ invalid_name: 3, auto_detect_cap: 1 });
  });

  it('should bound its warnings: past 1000 distinct ones, drops are only counted', () => {
    const { wm, logs } = setup(config(MODEL_SPECS));
    for (let i = 0; i < 1500; i++) wm.getMetric(`Missing${i}`).addOrUpdate(1);
    expect([logs.length, wm.dropped.unknown_metric]).to.deep.equal([1000, 1500]);
  });
});
