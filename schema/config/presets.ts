/**
 * Named histogram bucket lists. A histogram's `buckets` may name one of these; without
 * `buckets` the preset matching its unit is used, so a millisecond latency never gets
 * prom-client's 0.005..10 defaults (the TorchServe pitfall where every value lands in +Inf).
 */
import type { UnitKind } from './units.js';
import { unitKind } from './units.js';

const ONE_TWO_FIVE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];

/** Every preset, by the name used in metrics.yaml. Values are upper bounds, without +Inf. */
export const BUCKET_PRESETS: Readonly<Record<string, readonly number[]>> = {
  latency_ms: [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000],
  latency_us: [
    100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 10000000,
  ],
  latency_s: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  percent: [5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 100],
  ratio: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1],
  bytes: [1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456, 1073741824],
  count_1_2_5: ONE_TWO_FIVE,
  count_pow2: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384],
  generic: [0.001, 0.01, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 10000, 100000],
  // vLLM's lists, under their vLLM names, for users porting dashboards.
  vllm_ttft: [
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
    640.0, 2560.0,
  ],
  vllm_itl: [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0],
  vllm_request_latency: [
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0,
    1920.0, 7680.0,
  ],
  vllm_iteration_tokens: [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384],
  vllm_params_n: [1, 2, 5, 10, 20],
};

/**
 * Most upper bounds a histogram may have. Each series renders a line per bound in every scrape
 * and keeps a count per bound; the presets have at most 22, OpenTelemetry's exponential
 * histograms default to 160.
 */
export const MAX_BUCKETS = 256;

/** Preset names in declaration order (the schema's enum mirrors this; a test checks it). */
export const BUCKET_PRESET_NAMES: readonly string[] = Object.keys(BUCKET_PRESETS);

const BY_KIND: Readonly<Record<UnitKind, string>> = {
  milliseconds: 'latency_ms',
  microseconds: 'latency_us',
  seconds: 'latency_s',
  percent: 'percent',
  ratio: 'ratio',
  bytes: 'bytes',
  // kB / MB / GB values are small numbers of a large unit: 1-2-5 fits them.
  scaled_bytes: 'count_1_2_5',
  count: 'count_1_2_5',
  other: 'generic',
};

/** The preset name used for a histogram declared without `buckets`. */
export function presetForUnit(unit: string): string {
  return BY_KIND[unitKind(unit)];
}

/** The bucket list of a preset, or null for an unknown name. */
export function presetBuckets(name: string): readonly number[] | null {
  return Object.prototype.hasOwnProperty.call(BUCKET_PRESETS, name)
    ? (BUCKET_PRESETS[name] as readonly number[])
    : null;
}
