/** Test helper: forks the compiled worker entry for real and collects what it sends. */
import { fork } from 'child_process';
import type { ChildProcess } from 'child_process';
import * as path from 'path';
import { parseMetricsConfig } from '../../../schema/config.js';
import type { MetricsConfig } from '../../../schema/types.js';
import type { InitMessage, ModelConfig } from '../../../schema/worker-protocol.js';
import { decodeMetricsMessage, expandDatapoints, isMetricsMessageType } from '../../../schema/ipc.js';

/** dist/backend/worker/main.js, from dist/test/backend/worker. */
export const WORKER_ENTRY = path.resolve(import.meta.dirname, '..', '..', '..', 'backend', 'worker', 'main.js');

/** The model metrics the worker tests declare. */
export const TEST_METRICS_YAML = `
dimensions:
  - &model_name "ModelName"
  - &level "Level"
model_metrics:
  counter:
    - name: LateCount
      unit: Count
      dimensions: [*model_name, *level]
  gauge:
    - name: HandlerTime
      unit: ms
      dimensions: [*model_name, *level]
    - name: PredictionTime
      unit: ms
      dimensions: [*model_name, *level]
`;

/** Parses a metrics.yaml text with the real loader; throws on problems. */
export function testMetricsConfig(text = TEST_METRICS_YAML): MetricsConfig {
  const r = parseMetricsConfig(text, 'test-metrics.yaml');
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
  return r.config;
}

/** A ModelConfig for a model directory. */
export function modelConfig(name: string, dir: string, handler: string, extra: Partial<ModelConfig> = {}): ModelConfig {
  return {
    name,
    version: '1.0',
    dir,
    handler,
    modelFile: 'model.onnx',
    batchSize: 4,
    maxBatchDelayMs: 10,
    minWorkers: 1,
    maxWorkers: 1,
    responseTimeoutSec: 30,
    threads: 1,
    ...extra,
  };
}

/** A datapoint decoded from a metrics flush. */
export interface Point {
  readonly metric: string;
  readonly dims: readonly string[];
  readonly value: number;
  readonly requestId: string | null;
}

/** A forked worker with every message it sent, metrics decoded into points. */
export class ForkedWorker {
  readonly child: ChildProcess;
  readonly messages: unknown[] = [];
  readonly points: Point[] = [];
  readonly stderr: string[] = [];
  private readonly series = new Map<number, { metric: string; values: readonly string[] }>();
  private waiters: { pred: (m: unknown) => boolean; resolve: (m: unknown) => void }[] = [];
  readonly exited: Promise<number | null>;

  constructor() {
    this.child = fork(WORKER_ENTRY, [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    this.child.stderr!.on('data', (d: Buffer) => this.stderr.push(d.toString()));
    this.child.on('message', (m: unknown) => this.onMessage(m));
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }

  send(msg: object): void {
    this.child.send(msg);
  }

  init(model: ModelConfig, metrics = testMetricsConfig()): void {
    const init: InitMessage = {
      type: 'tsserve.init',
      v: 1,
      workerId: `W-test-${model.name}`,
      workerIndex: 0,
      model,
      metrics,
    };
    this.send(init);
  }

  /** Resolves with the first message (already received or future) matching `pred`. */
  waitFor<T = unknown>(pred: (m: unknown) => boolean): Promise<T> {
    const seen = this.messages.find(pred);
    if (seen !== undefined) return Promise.resolve(seen as T);
    return new Promise((resolve) => this.waiters.push({ pred, resolve: resolve as (m: unknown) => void }));
  }

  waitType<T = unknown>(type: string): Promise<T> {
    return this.waitFor<T>((m) => (m as { type?: unknown }).type === type);
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  private onMessage(m: unknown): void {
    this.messages.push(m);
    // A flush comes alone or inside a batch's result (as the frontend reads it: that first).
    const carried =
      (m as { type?: unknown; metrics?: unknown }).type === 'tsserve.result'
        ? (m as { metrics?: unknown }).metrics
        : undefined;
    for (const f of [carried, m]) {
      if (!isMetricsMessageType(f)) continue;
      const d = decodeMetricsMessage(f);
      if ('error' in d) throw new Error(`bad metrics message: ${d.error}`);
      for (const s of d.series) this.series.set(s.id, { metric: s.metric, values: s.values });
      for (const p of expandDatapoints(d)) {
        const s = this.series.get(p.seriesId)!;
        this.points.push({ metric: s.metric, dims: s.values, value: p.value, requestId: p.requestId });
      }
    }
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (w.pred(m)) w.resolve(m);
      else still.push(w);
    }
    this.waiters = still;
  }
}
