/**
 * One request counted in TorchServe's per-model families (`ts_inference_requests_total`,
 * `ts_inference_latency_microseconds`, `ts_queue_latency_microseconds`) on the doors that do
 * not go through a batcher: the OpenAI generation routes and the pipelines. Counted once when
 * admitted (as /predictions counts at admission), its latency and queue time once when it ends,
 * however it ends (answered, failed, or the client gone).
 */
import { performance } from 'perf_hooks';
import { msAsUs } from '../../schema/elapsed.js';
import type { FrontendSeries, ModelSeries } from './frontend-series.js';

/** The count of one request: admitted at most once, ended at most once (only after admission). */
export class InferenceCount {
  private admittedOnce = false;
  private ended = false;
  private queueMs = 0;

  constructor(
    private readonly series: ModelSeries | undefined,
    private readonly arrivalMs: number,
  ) {}

  /** The request reached the model (a refused one never counts). */
  admitted(): void {
    if (this.series === undefined || this.admittedOnce) return;
    this.admittedOnce = true;
    this.series.requests.record(1);
  }

  /** One engine request's queue time (ms); the request waited as long as its longest-queued prompt. */
  queued(ms: number): void {
    if (ms > this.queueMs) this.queueMs = ms;
  }

  /** The request ended: latency from arrival, and its queue time, in microseconds. */
  end(): void {
    if (this.series === undefined || !this.admittedOnce || this.ended) return;
    this.ended = true;
    this.series.latencyUs.record(msAsUs(performance.now() - this.arrivalMs));
    this.series.queueUs.record(msAsUs(this.queueMs));
  }
}

/**
 * The TorchServe series of each model a door serves, bound once per served model object, with
 * `model_version="default"` (the doors name no version, as /predictions without one and
 * /v1/embeddings count).
 */
export function inferenceSeriesOf(
  series: Pick<FrontendSeries, 'forModel'>,
): (model: { readonly config: { readonly name: string } }) => ModelSeries {
  const bound = new WeakMap<object, ModelSeries>();
  return (m) => {
    let s = bound.get(m);
    if (s === undefined) bound.set(m, (s = series.forModel(m.config.name, 'default')));
    return s;
  };
}
