import { expect } from 'chai';
import * as path from 'path';
import type { MetricsConfig } from '../../../schema/types.js';
import type { ModelConfig } from '../../../schema/worker-protocol.js';
import type { JobOutcome } from '../../../frontend/batching/job.js';
import { BatchedModel } from '../../../frontend/models/batched-model.js';
import { FrontendSeries } from '../../../frontend/models/frontend-series.js';
import type { MetricHandle, MetricsPort } from '../../../frontend/models/metrics-port.js';
import { recordingLog } from '../log/recording-log.js';

const ENTRY = path.join(import.meta.dirname, '..', 'workers', 'fixtures', 'echo-worker.js');
const METRICS: MetricsConfig = {
  file: '',
  modes: [],
  autoDetect: false,
  metrics: [],
  statsd: { host: '127.0.0.1', port: 8125, prefix: '', tagStyle: 'datadog', histogramType: 'ms' },
  limits: { maxSeriesPerMetric: 100, maxPointsPerFlush: 100 },
};

/** Metrics off: every series a no-op. */
const NO_METRICS: MetricsPort = {
  prometheusContentType: 'text/plain',
  modes: [],
  get: (): MetricHandle | null => null,
  byKey: (): MetricHandle | null => null,
  prometheusText: () => Promise.resolve(''),
  close: () => Promise.resolve(),
};

/** A model over echo workers that fail to load. */
function failingModel(): BatchedModel {
  const config: ModelConfig = {
    name: 'm',
    version: '1.0',
    dir: import.meta.dirname,
    handler: 'onnx',
    modelFile: 'x',
    batchSize: 1,
    maxBatchDelayMs: 0,
    minWorkers: 1,
    maxWorkers: 1,
    responseTimeoutSec: 10,
    threads: 1,
    handlerOptions: { failLoad: true },
  };
  let port = 9000;
  return new BatchedModel(config, {
    pool: {
      entry: ENTRY,
      metrics: METRICS,
      nextWorkerPort: () => port++,
      ingest: { handle: () => false, forget: () => undefined },
      onOtherMessage: () => undefined,
      onWorkerGone: () => undefined,
      onWorkerLoaded: () => undefined,
      log: recordingLog([]),
      backoffBaseMs: 60_000,
    },
    series: new FrontendSeries(NO_METRICS),
    modelUrl: 'm',
    loadedAtStartup: false,
  });
}

describe('BatchedModel.describe', () => {
  it('should say why its worker failed to load (the describe showed workers: [] and no reason)', async () => {
    const model = failingModel();
    expect(model.describe().lastWorkerError).to.equal(undefined);
    await model.start();
    try {
      expect(model.describe().lastWorkerError).to.equal('worker W-9000-m_1.0 failed to load: told to fail');
    } finally {
      await model.stop();
    }
  });
});

describe('BatchedModel.scale', () => {
  it('should leave queued requests queued when scaled up after its workers failed to load (regression: answered 503 "was scaled to 0 workers")', async () => {
    const model = failingModel();
    const outcomes: JobOutcome[] = [];
    const started = model.start();
    expect(model.submit({ requestId: 'r1', body: 1, arrivalMs: 0, done: (o) => outcomes.push(o) })).to.equal('queued');
    await started;
    try {
      await model.scale(1, 1);
      expect(outcomes).to.deep.equal([]);
    } finally {
      await model.stop();
    }
    expect(outcomes.map((o) => o.status)).to.deep.equal([503]);
  });
});
