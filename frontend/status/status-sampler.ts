/**
 * Samples the server once a second for the status page: reads the exposition of the families
 * the page shows (parsed back from the text `/metrics` renders) and the model table, keeps the
 * charts' last 15 minutes in fixed-size rings, and holds the latest snapshot ready, so a page's
 * poll costs a lookup, never a render. It runs only while the page is watched: the first status
 * request starts it, and 15 minutes without one stop it (a server nobody looks at pays nothing).
 * Its timer is unref'd; `stop()` ends it.
 */
import type { Sample } from './exposition-parse.js';
import { bucketDelta, bucketsOf, parseExposition, quantile, sumOf } from './exposition-parse.js';
import { ChartRing } from './chart-ring.js';
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
  /** The text exposition of the named families; null when the prometheus sink is off. */
  exposition(names: readonly string[]): Promise<string | null>;
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
  private prev: { samples: Sample[]; atMs: number } | null = null;
  private readonly batchSizes = new Map<string, number[]>();
  private latest: StatusSnapshot;
  private sampling: Promise<void> | null = null;
  private lastWatchedMs = 0;

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
    this.latest = this.build([], null, 0);
  }

  /**
   * A status request came: sampling goes on for KEEP_SAMPLING_MS more; when it was idle, it
   * starts, and the returned promise resolves once the first sample is in.
   */
  watched(): Promise<void> {
    this.lastWatchedMs = this.nowMs();
    if (this.timer !== null) return this.sampling ?? Promise.resolve();
    this.timer = setInterval(() => void this.tick(), SAMPLE_INTERVAL_S * 1000);
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
    if (sinceS === undefined) return this.latest;
    const charts = {} as Record<keyof StatusCharts, StatusCharts[keyof StatusCharts]>;
    for (const k of Object.keys(this.rings) as (keyof StatusCharts)[]) charts[k] = this.rings[k].points(sinceS);
    return { ...this.latest, charts };
  }

  /** Takes one sample now (the timer calls it; tests call it to step). Concurrent calls share one. */
  sample(): Promise<void> {
    this.sampling ??= this.takeSample().finally(() => (this.sampling = null));
    return this.sampling;
  }

  private names(): string[] {
    const names = [
      'ts_inference_requests_total',
      'http_request_duration_seconds',
      'tsserve_worker_restarts_total',
      'tsserve_sink_errors_total',
      'RequestBatchSize',
    ];
    for (const key of Object.values(LLM_KEYS)) {
      const n = this.src.familyName(key);
      if (n !== null) names.push(n);
    }
    return names;
  }

  private async takeSample(): Promise<void> {
    const now = this.nowMs();
    // A failed render is a sample without figures, not a stopped sampler.
    const text = await this.src.exposition(this.names()).catch(() => null);
    const samples = text === null ? [] : parseExposition(text);
    const prev = this.prev;
    const dt = prev === null ? 0 : (now - prev.atMs) / 1000;
    const models = this.src.describe();
    this.record(samples, prev, dt, models, now);
    this.latest = this.build(samples, text === null ? null : prev, dt);
    this.prev = { samples, atMs: now };
  }

  /** Pushes one point to every chart (null where the interval observed nothing). */
  private record(
    samples: Sample[],
    prev: { samples: Sample[]; atMs: number } | null,
    dt: number,
    models: readonly DescribedModel[],
    now: number,
  ): void {
    const t = Math.round(now / 1000);
    const http = (s: Sample[]): Array<[number, number]> => {
      const out = new Map<number, number>();
      for (const x of s) {
        if (x.name !== 'http_request_duration_seconds_bucket' || !INFERENCE_ROUTE.test(x.labels.handler ?? ''))
          continue;
        const le = x.labels.le === '+Inf' ? Infinity : Number(x.labels.le);
        out.set(le, (out.get(le) ?? 0) + x.value);
      }
      return [...out].sort((a, b) => a[0] - b[0]);
    };
    const since = (now2: Array<[number, number]>, before: Array<[number, number]>): Array<[number, number]> =>
      bucketDelta(now2, before);
    const lat = prev === null ? [] : since(http(samples), http(prev.samples));
    const count = lat.length === 0 ? 0 : lat[lat.length - 1]![1];
    this.rings.requestsPerS.push(t, prev === null || dt <= 0 ? null : count / dt);
    this.rings.latencyP50S.push(t, quantile(0.5, lat));
    this.rings.latencyP99S.push(t, quantile(0.99, lat));
    const llm = (key: string): Array<[number, number]> => {
      const n = this.src.familyName(key);
      if (n === null || prev === null) return [];
      return since(bucketsOf(samples, n), bucketsOf(prev.samples, n));
    };
    const ttft = llm(LLM_KEYS.ttft);
    const itl = llm(LLM_KEYS.itl);
    this.rings.ttftP50S.push(t, quantile(0.5, ttft));
    this.rings.ttftP99S.push(t, quantile(0.99, ttft));
    this.rings.itlP50S.push(t, quantile(0.5, itl));
    this.rings.itlP99S.push(t, quantile(0.99, itl));
    let depth = 0;
    for (const m of models) depth += m.jobQueueStatus.pendingRequests;
    const waiting = this.src.familyName(LLM_KEYS.waiting);
    if (waiting !== null) depth += sumOf(samples, waiting);
    this.rings.queueDepth.push(t, depth);
    const kv = this.src.familyName(LLM_KEYS.kv);
    let kvMax: number | null = null;
    if (kv !== null) for (const x of samples) if (x.name === kv) kvMax = Math.max(kvMax ?? 0, x.value);
    this.rings.kvUsage.push(t, kvMax);
    for (const x of samples) {
      if (x.name !== 'RequestBatchSize' || x.labels.model_name === undefined) continue;
      let ring = this.batchSizes.get(x.labels.model_name);
      if (ring === undefined) {
        if (this.batchSizes.size >= MAX_MODELS) continue;
        this.batchSizes.set(x.labels.model_name, (ring = []));
      }
      ring.push(x.value);
      if (ring.length > BATCH_SAMPLES) ring.shift();
    }
  }

  private build(samples: Sample[], prev: { samples: Sample[]; atMs: number } | null, dt: number): StatusSnapshot {
    const now = this.nowMs();
    const described = this.src.describe();
    const fam = (key: string): string | null => this.src.familyName(key);
    const models: StatusModel[] = described.slice(0, MAX_MODELS).map((d) => {
      const match = { model_name: d.modelName };
      const running = fam(LLM_KEYS.running);
      const isGeneration =
        running !== null && samples.some((x) => x.name === running && x.labels.model_name === d.modelName);
      const generated = fam(LLM_KEYS.generated);
      const genTotal = (s: Sample[]): number => (generated === null ? 0 : sumOf(s, generated, match));
      const queries = fam(LLM_KEYS.queries);
      const hits = fam(LLM_KEYS.hits);
      const q = queries === null ? 0 : sumOf(samples, queries, match);
      const sizes: Record<string, number> = {};
      for (const v of this.batchSizes.get(d.modelName) ?? []) sizes[String(v)] = (sizes[String(v)] ?? 0) + 1;
      return {
        name: d.modelName,
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
        restarts: sumOf(samples, 'tsserve_worker_restarts_total', match),
        queue: { pending: d.jobQueueStatus.pendingRequests, capacity: d.jobQueueStatus.remainingCapacity },
        requests: sumOf(samples, 'ts_inference_requests_total', match),
        batchSizes: sizes,
        generation: isGeneration
          ? {
              running: sumOf(samples, running, match),
              waiting: sumOf(samples, fam(LLM_KEYS.waiting) ?? '', match),
              kvUsage: sumOf(samples, fam(LLM_KEYS.kv) ?? '', match),
              prefixHitRate: q > 0 ? sumOf(samples, hits ?? '', match) / q : null,
              tokensPerS: prev === null || dt <= 0 ? 0 : Math.max(0, (genTotal(samples) - genTotal(prev.samples)) / dt),
            }
          : null,
        lastWorkerError: d.lastWorkerError ?? null,
      };
    });
    const sinks = this.src.modes.map((mode) => ({
      mode,
      errors: sumOf(samples, 'tsserve_sink_errors_total', { sink: mode }),
    }));
    const charts = {} as Record<keyof StatusCharts, StatusCharts[keyof StatusCharts]>;
    for (const k of Object.keys(this.rings) as (keyof StatusCharts)[]) charts[k] = this.rings[k].points();
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
      charts,
      sampleIntervalS: SAMPLE_INTERVAL_S,
    };
  }
}
