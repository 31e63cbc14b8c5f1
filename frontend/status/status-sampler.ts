/**
 * Samples the server once a second for the status page: reads the families the page shows
 * straight from the prometheus sink's metric cells (the values `/metrics` renders at that
 * moment: no text rendered or parsed, nothing allocated per series) and the model table, keeps
 * the charts' last 15 minutes in fixed-size rings, and holds the latest snapshot ready, so a
 * page's poll costs a lookup, never a render. It runs only while the page is watched: the first status
 * request starts it, and 15 minutes without one stop it (a server nobody looks at pays nothing).
 * Its timer is unref'd; `stop()` ends it.
 */
import type { MetricCells, SeriesLabels } from '../metrics/metric-cells.js';
import { BatchSizeWindow } from './batch-size-window.js';
import { ChartRing } from './chart-ring.js';
import { HistogramWindow } from './histogram-window.js';
import { LabelSums } from './label-sums.js';
import type { StatusCharts, StatusModel, StatusSnapshot, StatusWorker } from './status-snapshot.js';

/** A model as the model table describes it (the management API's describe fields the page uses). */
export interface DescribedModel {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly kind: string;
  readonly handler: string;
  readonly batchSize: number;
  readonly workers: readonly DescribedWorker[];
  readonly jobQueueStatus: { readonly remainingCapacity: number; readonly pendingRequests: number };
  readonly lastWorkerError?: string;
  /** A pipeline's stages with their workers and replica indices. */
  readonly stages?: ReadonlyArray<{
    readonly stage: string;
    readonly model: string;
    readonly replicas: number;
    readonly workers: ReadonlyArray<DescribedWorker & { readonly replica: number | null }>;
  }>;
}

/** A worker as the model table describes it. */
interface DescribedWorker {
  readonly id: string;
  readonly pid: number | null;
  readonly status: string;
  readonly startTime: string;
}

/** What the sampler reads. */
export interface StatusSources {
  describe(): readonly DescribedModel[];
  /** The prometheus sink's cells, read in place; null when that sink is off. */
  readonly cells: MetricCells | null;
  /** The name metrics.yaml gives the family bound by `key` (`llm.time_to_first_token`), or null. */
  familyName(key: string): string | null;
  readonly modes: readonly string[];
  readonly version: string;
  /** Epoch ms (default Date.now). */
  readonly nowMs?: () => number;
}

/** Seconds between samples. */
export const SAMPLE_INTERVAL_S = 1;
/** Samples each chart keeps (15 minutes at 1 Hz). */
export const HISTORY = 900;
/** Most models a snapshot lists (the rest are counted, not shown). */
export const MAX_MODELS = 200;
/** RequestBatchSize samples kept per model for its distribution (5 minutes). */
const BATCH_SAMPLES = 300;

/** The inference routes whose HTTP histogram the latency charts read. */
const INFERENCE_ROUTE = /^\/(predictions|v2\/models|v1\/)/;

/** Whether a series of `http_request_duration_seconds` is an inference route's. */
const inferenceRoute = (labels: SeriesLabels): boolean => INFERENCE_ROUTE.test(labels.handler ?? '');

const LLM_KEYS = {
  ttft: 'llm.time_to_first_token',
  itl: 'llm.inter_token_latency',
  running: 'llm.num_requests_running',
  waiting: 'llm.num_requests_waiting',
  kv: 'llm.kv_cache_usage',
  queries: 'llm.prefix_cache_queries',
  hits: 'llm.prefix_cache_hits',
  generated: 'llm.generation_tokens',
} as const;

/** How long sampling goes on after the last status request (ms): the charts' span. */
export const KEEP_SAMPLING_MS = HISTORY * SAMPLE_INTERVAL_S * 1000;

/** A worker's row: its uptime from its start time. */
function statusWorker(w: DescribedWorker, now: number): StatusWorker {
  const started = Date.parse(w.startTime);
  return {
    id: w.id,
    pid: w.pid,
    status: w.status,
    uptimeS: Number.isFinite(started) ? Math.max(0, Math.round((now - started) / 1000)) : null,
  };
}

/** Samples the server and keeps the page's snapshot. */
export class StatusSampler {
  private readonly rings: Record<keyof StatusCharts, ChartRing>;
  private readonly startedMs: number;
  private readonly nowMs: () => number;
  private timer: NodeJS.Timeout | null = null;
  /** When the previous sample was taken (epoch ms), null before the first. */
  private prevMs: number | null = null;
  private readonly batchSizes = new Map<string, BatchSizeWindow>();
  /** The latest sample's snapshot but its charts, which a request draws from the rings. */
  private latest: Omit<StatusSnapshot, 'charts'>;
  private lastWatchedMs = 0;
  // What each sample reads, reused from one sample to the next.
  private readonly latency = new HistogramWindow(inferenceRoute);
  private readonly ttft = new HistogramWindow();
  private readonly itl = new HistogramWindow();
  private readonly requests = new LabelSums('model_name');
  private readonly restarts = new LabelSums('model_name');
  private readonly engineRunning = new LabelSums('model_name');
  private readonly waiting = new LabelSums('model_name');
  private readonly kv = new LabelSums('model_name');
  private readonly queries = new LabelSums('model_name');
  private readonly hits = new LabelSums('model_name');
  private generated = new LabelSums('model_name');
  private prevGenerated = new LabelSums('model_name');
  private readonly sinkErrors = new LabelSums('sink');
  private readonly pushBatchSize = (labels: SeriesLabels, value: number): void => {
    // The yaml's handler metric is labelled `ModelName` (TorchServe's name); `model_name` too, for a yaml that renames it.
    const model = labels.ModelName ?? labels.model_name;
    if (model === undefined) return;
    let ring = this.batchSizes.get(model);
    if (ring === undefined) {
      if (this.batchSizes.size >= MAX_MODELS) return;
      this.batchSizes.set(model, (ring = new BatchSizeWindow(BATCH_SAMPLES)));
    }
    ring.push(value);
  };

  constructor(private readonly src: StatusSources) {
    this.nowMs = src.nowMs ?? Date.now;
    this.startedMs = this.nowMs();
    this.rings = {
      requestsPerS: new ChartRing(HISTORY),
      latencyP50S: new ChartRing(HISTORY),
      latencyP99S: new ChartRing(HISTORY),
      ttftP50S: new ChartRing(HISTORY),
      ttftP99S: new ChartRing(HISTORY),
      itlP50S: new ChartRing(HISTORY),
      itlP99S: new ChartRing(HISTORY),
      queueDepth: new ChartRing(HISTORY),
      kvUsage: new ChartRing(HISTORY),
    };
    this.latest = this.build([], false, 0);
  }

  /**
   * A status request came: sampling goes on for KEEP_SAMPLING_MS more; when it was idle, it
   * starts with a first sample, in before the returned promise resolves.
   */
  watched(): Promise<void> {
    this.lastWatchedMs = this.nowMs();
    if (this.timer !== null) return Promise.resolve();
    this.timer = setInterval(() => {
      try {
        void this.tick();
      } catch {
        // A model table that cannot be described this second leaves the last snapshot, never a thrown timer.
      }
    }, SAMPLE_INTERVAL_S * 1000);
    this.timer.unref();
    return this.sample();
  }

  /** One timer tick: a sample, or the stop once nobody watched for KEEP_SAMPLING_MS. */
  tick(): Promise<void> {
    if (this.nowMs() - this.lastWatchedMs > KEEP_SAMPLING_MS) {
      this.stop();
      return Promise.resolve();
    }
    return this.sample();
  }

  /** Whether it samples now. */
  get running(): boolean {
    return this.timer !== null;
  }

  /** Stops sampling. */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The latest snapshot; with `sinceS`, the charts hold only points after that epoch second. */
  snapshot(sinceS?: number): StatusSnapshot {
    // Drawn per request, not per sample: a page polls with `since` and takes only the new points.
    const charts = {} as Record<keyof StatusCharts, StatusCharts[keyof StatusCharts]>;
    for (const k of Object.keys(this.rings) as (keyof StatusCharts)[]) charts[k] = this.rings[k].points(sinceS);
    return { ...this.latest, charts };
  }

  /** Takes one sample now (the timer calls it; tests call it to step); synchronous, resolved when done. */
  sample(): Promise<void> {
    const now = this.nowMs();
    const dt = this.prevMs === null ? 0 : (now - this.prevMs) / 1000;
    const models = this.src.describe();
    let readable = this.src.cells !== null;
    try {
      this.read(this.src.cells);
    } catch {
      // A failed read is a sample without figures, not a stopped sampler (nor a rejection in a timer).
      this.read(null);
      readable = false;
    }
    this.record(dt, models, now);
    this.latest = this.build(models, readable && this.prevMs !== null, dt);
    this.prevMs = now;
    return Promise.resolve();
  }

  /** Reads every family the page shows from `cells` (all empty when null). */
  private read(cells: MetricCells | null): void {
    const fam = (key: string): string | null => this.src.familyName(key);
    this.latency.read(cells, 'http_request_duration_seconds');
    this.ttft.read(cells, fam(LLM_KEYS.ttft));
    this.itl.read(cells, fam(LLM_KEYS.itl));
    this.requests.read(cells, 'ts_inference_requests_total');
    this.restarts.read(cells, 'tsserve_worker_restarts_total');
    this.engineRunning.read(cells, fam(LLM_KEYS.running));
    this.waiting.read(cells, fam(LLM_KEYS.waiting));
    this.kv.read(cells, fam(LLM_KEYS.kv));
    this.queries.read(cells, fam(LLM_KEYS.queries));
    this.hits.read(cells, fam(LLM_KEYS.hits));
    [this.generated, this.prevGenerated] = [this.prevGenerated, this.generated];
    this.generated.read(cells, fam(LLM_KEYS.generated));
    this.sinkErrors.read(cells, 'tsserve_sink_errors_total');
    cells?.eachValue('RequestBatchSize', this.pushBatchSize);
  }

  /** Pushes one point to every chart (null where the interval observed nothing). */
  private record(dt: number, models: readonly DescribedModel[], now: number): void {
    const t = Math.round(now / 1000);
    const first = this.prevMs === null || dt <= 0;
    this.rings.requestsPerS.push(t, first ? null : this.latency.count / dt);
    this.rings.latencyP50S.push(t, this.latency.quantile(0.5));
    this.rings.latencyP99S.push(t, this.latency.quantile(0.99));
    this.rings.ttftP50S.push(t, this.ttft.quantile(0.5));
    this.rings.ttftP99S.push(t, this.ttft.quantile(0.99));
    this.rings.itlP50S.push(t, this.itl.quantile(0.5));
    this.rings.itlP99S.push(t, this.itl.quantile(0.99));
    let depth = this.waiting.total;
    for (const m of models) depth += m.jobQueueStatus.pendingRequests;
    this.rings.queueDepth.push(t, depth);
    this.rings.kvUsage.push(t, this.kv.max === null ? null : Math.max(0, this.kv.max));
  }

  /** The snapshot of this sample (but its charts); `rates` when a previous sample of the cells makes rates known. */
  private build(described: readonly DescribedModel[], rates: boolean, dt: number): Omit<StatusSnapshot, 'charts'> {
    const now = this.nowMs();
    const models: StatusModel[] = described.slice(0, MAX_MODELS).map((d) => {
      const name = d.modelName;
      const q = this.queries.get(name);
      const tokens = this.generated.get(name) - this.prevGenerated.get(name);
      return {
        name,
        version: d.modelVersion,
        kind: d.kind,
        handler: d.handler,
        batchSize: d.batchSize,
        workers: d.workers.map((w) => statusWorker(w, now)),
        stages: (d.stages ?? []).map((st) => ({
          stage: st.stage,
          model: st.model,
          replicas: st.replicas,
          workers: st.workers.map((w) => ({ ...statusWorker(w, now), replica: w.replica })),
        })),
        restarts: this.restarts.get(name),
        queue: { pending: d.jobQueueStatus.pendingRequests, capacity: d.jobQueueStatus.remainingCapacity },
        requests: this.requests.get(name),
        batchSizes: this.batchSizes.get(name)?.distribution() ?? {},
        generation: this.engineRunning.has(name)
          ? {
              running: this.engineRunning.get(name),
              waiting: this.waiting.get(name),
              kvUsage: this.kv.get(name),
              prefixHitRate: q > 0 ? this.hits.get(name) / q : null,
              tokensPerS: !rates || dt <= 0 ? 0 : Math.max(0, tokens / dt),
            }
          : null,
        lastWorkerError: d.lastWorkerError ?? null,
      };
    });
    const sinks = this.src.modes.map((mode) => ({ mode, errors: this.sinkErrors.get(mode) }));
    return {
      time: new Date(now).toISOString(),
      uptimeS: Math.round((now - this.startedMs) / 1000),
      version: this.src.version,
      metricsOn: this.src.modes.includes('prometheus'),
      models,
      sinks,
      totals: {
        requests: models.reduce((s, m) => s + m.requests, 0),
        workers: models.reduce((s, m) => s + m.workers.length, 0),
        pending: models.reduce((s, m) => s + m.queue.pending, 0),
      },
      sampleIntervalS: SAMPLE_INTERVAL_S,
    };
  }
}
