/**
 * What the status page shows, as one bounded JSON value: every model (kind, version, workers,
 * queue, requests, restarts; generation models' running / waiting, KV usage, prefix hit rate,
 * tokens/s), the sinks and their error counts, and the charts' history. Built by the sampler
 * from the server's own exposition (parsed back: the page's numbers are the ones `/metrics`
 * shows at the same moment) and the model table's descriptions.
 */

/** One worker as the page lists it. */
export interface StatusWorker {
  readonly id: string;
  readonly pid: number | null;
  readonly status: string;
  /** Seconds since it started (null when its start time is unknown). */
  readonly uptimeS: number | null;
}

/** One generation model's engine figures. */
export interface StatusGeneration {
  readonly running: number;
  readonly waiting: number;
  /** KV cache blocks in use, 0..1. */
  readonly kvUsage: number;
  /** Prefix cache hits / queries since start (null before the first query). */
  readonly prefixHitRate: number | null;
  /** Generated tokens per second over the last sample interval. */
  readonly tokensPerS: number;
}

/** One model's row. */
export interface StatusModel {
  readonly name: string;
  readonly version: string;
  readonly kind: string;
  readonly handler: string;
  readonly batchSize: number;
  readonly workers: readonly StatusWorker[];
  readonly restarts: number;
  readonly queue: { readonly pending: number; readonly capacity: number };
  /** `ts_inference_requests_total` of the model (every version). */
  readonly requests: number;
  /** Batch sizes of the last samples (RequestBatchSize, sampled at 1 Hz): size → samples. */
  readonly batchSizes: Readonly<Record<string, number>>;
  readonly generation: StatusGeneration | null;
  readonly lastWorkerError: string | null;
  /** A pipeline's stages (empty for other models): each stage's model and its replicas' workers. */
  readonly stages: ReadonlyArray<{
    readonly stage: string;
    readonly model: string;
    readonly replicas: number;
    readonly workers: ReadonlyArray<StatusWorker & { readonly replica: number | null }>;
  }>;
}

/** A chart's points: `[epoch s, value]`, oldest first, null where nothing was observed. */
export type ChartPoints = ReadonlyArray<readonly [number, number | null]>;

/** Every chart of the page, by name. */
export interface StatusCharts {
  readonly requestsPerS: ChartPoints;
  readonly latencyP50S: ChartPoints;
  readonly latencyP99S: ChartPoints;
  readonly ttftP50S: ChartPoints;
  readonly ttftP99S: ChartPoints;
  readonly itlP50S: ChartPoints;
  readonly itlP99S: ChartPoints;
  readonly queueDepth: ChartPoints;
  readonly kvUsage: ChartPoints;
}

/** The page's data. */
export interface StatusSnapshot {
  readonly time: string;
  readonly uptimeS: number;
  readonly version: string;
  /** False when the prometheus sink is off: the page then has only the model table. */
  readonly metricsOn: boolean;
  readonly models: readonly StatusModel[];
  readonly sinks: ReadonlyArray<{ readonly mode: string; readonly errors: number }>;
  /** Totals of the samples the figures came from, for a check against /metrics. */
  readonly totals: { readonly requests: number; readonly workers: number; readonly pending: number };
  readonly charts: StatusCharts;
  readonly sampleIntervalS: number;
}

/** The chart names, in page order, with their titles and units. */
export const CHARTS: ReadonlyArray<{
  readonly key: keyof StatusCharts;
  readonly title: string;
  readonly unit: string;
}> = [
  { key: 'requestsPerS', title: 'Requests/s', unit: 'req/s' },
  { key: 'latencyP50S', title: 'Latency p50', unit: 's' },
  { key: 'latencyP99S', title: 'Latency p99', unit: 's' },
  { key: 'ttftP50S', title: 'TTFT p50', unit: 's' },
  { key: 'ttftP99S', title: 'TTFT p99', unit: 's' },
  { key: 'itlP50S', title: 'ITL p50', unit: 's' },
  { key: 'itlP99S', title: 'ITL p99', unit: 's' },
  { key: 'queueDepth', title: 'Queue depth', unit: 'requests' },
  { key: 'kvUsage', title: 'KV cache usage', unit: 'ratio' },
];
