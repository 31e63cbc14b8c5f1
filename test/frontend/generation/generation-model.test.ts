import { expect } from 'chai';
import * as path from 'path';
import type { GenRequestOutput } from '../../../schema/engine-ipc.js';
import type { MetricSpec, MetricsConfig } from '../../../schema/types.js';
import type { ModelConfig } from '../../../schema/worker-protocol.js';
import type { GenerationSink } from '../../../frontend/generation/generation-engine.js';
import type {
  GenerateRefused,
  GenerateRequest,
  GenerationHandle,
} from '../../../frontend/generation/generation-model.js';
import { GenerationModel } from '../../../frontend/generation/generation-model.js';
import { FrontendSeries } from '../../../frontend/models/frontend-series.js';
import type { MetricHandle, MetricsPort } from '../../../frontend/models/metrics-port.js';
import { recordingLog } from '../log/recording-log.js';
import { until } from '../../support/until.js';

/** The stand-in worker (fixtures/gen-worker.ts): its behaviour is chosen by the prompt. */
const ENTRY = path.join(import.meta.dirname, 'fixtures', 'gen-worker.js');
const METRICS: MetricsConfig = {
  file: '',
  modes: [],
  autoDetect: false,
  metrics: [],
  statsd: { host: '127.0.0.1', port: 8125, prefix: '', tagStyle: 'datadog', histogramType: 'ms' },
  limits: { maxSeriesPerMetric: 100, maxPointsPerFlush: 100 },
};

/** What a harness saw: self-metric records as `name{dims} value`, and log lines. */
interface Harness {
  readonly model: GenerationModel;
  readonly records: string[];
  readonly logs: string[];
}

/** What a harness changes beyond the model config: --job-queue-size, the pool's restart backoff (default 20 ms). */
interface HarnessOptions {
  readonly queueCapacity?: number;
  readonly backoffBaseMs?: number;
}

/** A model over stand-in workers; metrics are off but for the refusal self-metric, which is recorded. */
function harness(over: Partial<ModelConfig> = {}, { queueCapacity, backoffBaseMs = 20 }: HarnessOptions = {}): Harness {
  const records: string[] = [];
  const logs: string[] = [];
  const metrics: MetricsPort = {
    prometheusContentType: 'text/plain',
    modes: [],
    get: (name): MetricHandle | null =>
      name !== 'tsserve_requests_refused_total'
        ? null
        : {
            spec: { name } as MetricSpec,
            bind: (dims) => ({
              record: (v: number) => {
                records.push(`${name}${JSON.stringify(dims)} ${v}`);
              },
            }),
          },
    byKey: (): MetricHandle | null => null,
    prometheusText: () => Promise.resolve(''),
    close: () => Promise.resolve(),
  };
  const config: ModelConfig = {
    name: 'm',
    version: '1.0',
    dir: import.meta.dirname,
    handler: 'generate',
    modelFile: 'x',
    batchSize: 1,
    maxBatchDelayMs: 0,
    minWorkers: 1,
    maxWorkers: 1,
    responseTimeoutSec: 10,
    threads: 1,
    ...over,
  };
  let port = 9000;
  const model = new GenerationModel(
    config,
    {
      metrics,
      metricsConfig: METRICS,
      series: new FrontendSeries(metrics),
      poolDeps: {
        entry: ENTRY,
        metrics: METRICS,
        nextWorkerPort: () => port++,
        ingest: { handle: () => false, forget: () => undefined },
        onOtherMessage: () => undefined,
        onWorkerGone: () => undefined,
        onWorkerLoaded: () => undefined,
        log: recordingLog(logs),
        backoffBaseMs,
      },
      log: (level, msg) => logs.push(`${level}: ${msg}`),
      ...(queueCapacity !== undefined ? { queueCapacity } : {}),
    },
    { modelUrl: 'm', loadedAtStartup: false },
  );
  return { model, records, logs };
}

/** A sink recording outputs as `index:finishReason:text` and errors as `status message`. */
function recorder(onError: () => void = () => undefined): GenerationSink & { outputs: string[]; errors: string[] } {
  const r = {
    outputs: [] as string[],
    errors: [] as string[],
    onOutput: (o: GenRequestOutput) => {
      r.outputs.push(`${o.index}:${String(o.finishReason)}:${o.text}`);
    },
    onError: (s: number, m: string) => {
      r.errors.push(`${s} ${m}`);
      onError();
    },
  };
  return r;
}

const req = (prompt: string, engine?: number): GenerateRequest => ({
  prompt,
  params: { max_tokens: 1 },
  arrivalMs: 0,
  ...(engine !== undefined ? { engine } : {}),
});

function started(r: GenerationHandle | GenerateRefused): GenerationHandle {
  if ('status' in r) throw new Error(`refused: ${r.status} ${r.message}`);
  return r;
}

/** Runs a "finish" request to its output: the model serves again. */
async function served(model: GenerationModel): Promise<string[]> {
  const sink = recorder();
  started(model.generate(req('finish'), sink));
  await until(() => sink.outputs.length + sink.errors.length > 0, {
    message: 'the finish request to end',
    observe: () => sink,
  });
  return [...sink.outputs, ...sink.errors];
}

const STARTING = {
  status: 503,
  message: 'model m has no engine ready; its worker is starting or being replaced; retry in a few seconds',
};
const SCALED_TO_0 = { status: 503, message: 'model m has no engine ready; scale its workers with the management API' };

describe('GenerationModel', () => {
  it('should answer 503 "starting" before its first worker is ready, then serve', async () => {
    const { model } = harness();
    const starting = model.start();
    try {
      expect(model.generate(req('finish'), recorder())).to.deep.equal(STARTING);
      await starting;
      expect(await served(model)).to.deep.equal(['0:length:ok']);
    } finally {
      await model.stop();
    }
  });

  it('should answer 503 with the load error while its worker fails to load (it was told to retry in a few seconds, forever)', async () => {
    const { model } = harness({ handlerOptions: { failLoad: true } }, { backoffBaseMs: 60_000 });
    await model.start();
    try {
      expect(model.generate(req('finish'), recorder())).to.deep.equal({
        status: 503,
        message:
          'model m has no engine ready; its worker failed to load and is retried with backoff (worker W-9000-m_1.0 failed to load: told to fail)',
      });
      // The management API's describe says it too.
      expect(model.describe().lastWorkerError).to.equal('worker W-9000-m_1.0 failed to load: told to fail');
    } finally {
      await model.stop();
    }
  });

  it('should answer 503 "scale its workers" at 0 workers, configured so or scaled down, and serve once scaled up', async () => {
    const { model } = harness({ minWorkers: 0 });
    await model.start();
    try {
      expect(model.generate(req('finish'), recorder())).to.deep.equal(SCALED_TO_0);
      await model.scale(1, 1);
      expect(await served(model)).to.deep.equal(['0:length:ok']);
      await model.scale(0, 0);
      expect(model.engines()).to.deep.equal([]);
      expect(model.generate(req('finish'), recorder())).to.deep.equal(SCALED_TO_0);
    } finally {
      await model.stop();
    }
  });

  it('should fail the requests of a worker that died with 500 naming the worker, answer 503 "being replaced" until its replacement is ready, then serve on engine 0', async () => {
    const { model, logs } = harness();
    await model.start();
    try {
      const refusals: (GenerationHandle | GenerateRefused)[] = [];
      const held = recorder(() => refusals.push(model.generate(req('finish'), recorder())));
      started(model.generate(req('hold'), held));
      const crashed = recorder();
      started(model.generate(req('crash'), crashed));
      await until(() => crashed.errors.length > 0, { message: 'the crash request to fail', observe: () => crashed });
      const died = '500 worker W-9000-m_1.0 of model m (engine 0) exited';
      expect(held.errors).to.deep.equal([died]);
      expect(crashed.errors).to.deep.equal([died]);
      expect(refusals).to.deep.equal([STARTING]);
      await until(() => model.engines().length === 1, {
        message: 'the replacement engine',
        observe: () => model.describe().workers,
      });
      expect(model.engines().map((e) => [e.workerId, e.index])).to.deep.equal([['W-9001-m_1.0', 0]]);
      expect(await served(model)).to.deep.equal(['0:length:ok']);
      expect(logs.filter((l) => l.startsWith('warn'))).to.deep.equal([
        'warn: worker W-9000-m_1.0 died (code 3); replacing it {"worker":"W-9000-m_1.0","model":"m"}',
      ]);
    } finally {
      await model.stop();
    }
  });

  it('should let a scale-down\'s retired engine finish the generation it holds before its worker stops (it stopped at once, failing it 500 "exited")', async () => {
    const { model } = harness();
    await model.start();
    try {
      const held = recorder();
      const h = started(model.generate(req('hold'), held));
      const scaling = model.scale(0, 0);
      await until(() => model.describe().workers[0]?.status === 'STOPPING', {
        message: 'the worker retiring',
        observe: () => model.describe().workers,
      });
      // Retiring: new requests are refused, the held one still runs.
      expect(model.generate(req('finish'), recorder())).to.deep.equal(SCALED_TO_0);
      expect([held.outputs, held.errors, model.engines().length]).to.deep.equal([[], [], 1]);
      h.abort(); // its last output: the worker may go
      await scaling;
      expect([held.outputs, held.errors, model.engines().length]).to.deep.equal([['0:abort:'], [], 0]);
    } finally {
      await model.stop();
    }
  });

  it('should fail a retired engine\'s generation with 503 "retired by a scale-down" when it outlasts responseTimeout', async () => {
    const { model } = harness({ responseTimeoutSec: 1 });
    await model.start();
    try {
      const held = recorder();
      started(model.generate(req('hold'), held));
      await model.scale(0, 0);
      expect([held.outputs, held.errors]).to.deep.equal([
        [],
        [
          '503 worker W-9000-m_1.0 of model m (engine 0) was retired by a scale-down before this request finished (within responseTimeout 1 s); retry',
        ],
      ]);
    } finally {
      await model.stop();
    }
  });

  it('should fail the requests in flight with 503 "was stopped" when the model stops, and refuse new ones with 503 "stopping"', async () => {
    const { model } = harness();
    await model.start();
    const held = recorder();
    started(model.generate(req('hold'), held));
    await model.stop();
    expect(held.errors).to.deep.equal(['503 model m was stopped']);
    expect(model.generate(req('finish'), recorder())).to.deep.equal({
      status: 503,
      message: 'model m is being unregistered or the server is stopping',
    });
    expect(model.admits(5)).to.equal(null); // a stopping model refuses in generate(), not twice
  });

  it('should answer 503 naming --job-queue-size when the least loaded engine is full, for one request or a request of several prompts, counting each refusal once', async () => {
    const { model, records } = harness({}, { queueCapacity: 1 });
    await model.start();
    try {
      expect(model.admits(1)).to.equal(null);
      const held = started(model.generate(req('hold'), recorder()));
      expect(model.generate(req('finish'), recorder())).to.deep.equal({
        status: 503,
        message:
          'model m has 1 request in flight on its least loaded engine, the most one holds (--job-queue-size 1); retry later',
      });
      expect(model.admits(2)).to.deep.equal({
        status: 503,
        message:
          'model m can take 0 more requests before its engines are full (--job-queue-size 1 each), and this request has 2 prompts; retry later',
      });
      expect(model.remainingCapacity()).to.equal(0);
      const refused = 'tsserve_requests_refused_total{"model_name":"m","reason":"queue_full"}';
      expect(records).to.deep.equal([`${refused} 0`, `${refused} 1`, `${refused} 1`]);
      held.abort();
      await until(() => model.remainingCapacity() === 1, {
        message: 'the held request to be aborted',
        observe: () => model.describe().jobQueueStatus,
      });
      expect(model.admits(1)).to.equal(null);
    } finally {
      await model.stop();
    }
  });

  it('should answer 503 "starting" for a request pinned to an engine that is not up (a pipeline\'s sticky replica)', async () => {
    const { model } = harness();
    await model.start();
    try {
      expect(model.generate(req('finish', 1), recorder())).to.deep.equal(STARTING);
      const sink = recorder();
      started(model.generate(req('finish', 0), sink));
      await until(() => sink.outputs.length > 0, { message: 'the pinned request to finish', observe: () => sink });
      expect(sink.outputs).to.deep.equal(['0:length:ok']);
    } finally {
      await model.stop();
    }
  });

  it('should answer 503 "not reachable" while its worker\'s channel is closed but its end not yet seen, then fail what it held with 500', async () => {
    const { model, logs } = harness();
    await model.start();
    try {
      const lost = recorder();
      started(model.generate(req('exit held open'), lost));
      // Until the frontend sees the channel close, a request is still sent (and lost with the worker).
      const sent: ReturnType<typeof recorder>[] = [];
      const refused = await until(
        () => {
          const sink = recorder();
          const r = model.generate(req('finish'), sink);
          if ('status' in r) return r;
          sent.push(sink);
          return null;
        },
        { message: 'a refusal', intervalMs: 5 },
      );
      expect(refused).to.deep.equal({ status: 503, message: 'engine 0 of model m is not reachable' });
      const holder = await until(
        () => /^info: holder (\d+) /.exec(logs.find((l) => l.startsWith('info: holder ')) ?? '')?.[1],
        { message: "the holder's pid", observe: () => logs },
      );
      process.kill(Number(holder));
      await until(() => lost.errors.length > 0, { message: 'the held request to fail', observe: () => lost });
      const died = '500 worker W-9000-m_1.0 of model m (engine 0) exited';
      expect(lost.errors).to.deep.equal([died]);
      expect(sent.map((s) => s.errors)).to.deep.equal(sent.map(() => [died]));
    } finally {
      await model.stop();
    }
  });
});
