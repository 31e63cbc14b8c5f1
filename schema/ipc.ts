/**
 * The metrics flush protocol: what a worker sends the frontend over the fork IPC channel.
 *
 * Workers are forked with `serialization: 'advanced'` (V8 structured clone), so the datapoints
 * travel as one Float64Array (bytes, not JSON). Each series (metric + dimension values) is
 * declared once, in the first flush that uses it, and referenced by a small integer afterwards;
 * a datapoint is then four doubles. See docs/ipc.md for the full description.
 */
import type { MetricType } from './types';

/** Protocol version; a message with another `v` is rejected with a reason. */
export const METRICS_IPC_VERSION = 1;

/** The message `type`, in the `tsserve.` namespace shared with the control messages. */
export const METRICS_MESSAGE_TYPE = 'tsserve.metrics';

/** Doubles per datapoint in `MetricsMessage.points`: seriesId, value, requestRef, timeMs. */
export const POINT_STRIDE = 4;

/** `requestRef` of a datapoint that carries no request id. */
export const NO_REQUEST = -1;

/** Why a worker dropped a datapoint (travels as a delta in each flush). */
export type WorkerDropReason =
  | 'not_finite'
  | 'negative_counter'
  | 'bad_dimensions'
  | 'unknown_metric'
  | 'type_mismatch'
  | 'bad_unit';

/** Every `WorkerDropReason`, for validation and iteration. */
export const WORKER_DROP_REASONS: readonly WorkerDropReason[] = Object.freeze([
  'not_finite',
  'negative_counter',
  'bad_dimensions',
  'unknown_metric',
  'type_mismatch',
  'bad_unit',
]);

/** An auto-detected model metric, declared once by the worker that first used it. */
export interface MetricDecl {
  readonly name: string;
  readonly type: MetricType;
  /** Unit after TorchServe's shorthand mapping (`ms` → `Milliseconds`). */
  readonly unit: string;
  /** Dimension names in the worker's order, hostname excluded. */
  readonly dimensions: readonly string[];
}

/** A series, declared once per worker: `values` are in the metric's dimension order. */
export interface SeriesDecl {
  /** Dense per-worker id (0, 1, 2, …) used by the datapoints. */
  readonly id: number;
  readonly metric: string;
  readonly values: readonly string[];
}

/** One flush of one worker. */
export interface MetricsMessage {
  readonly type: typeof METRICS_MESSAGE_TYPE;
  readonly v: typeof METRICS_IPC_VERSION;
  /** Flush sequence number of this worker, from 0; for diagnostics. */
  readonly seq: number;
  /** Auto-detected metrics first used since the previous flush. */
  readonly metrics: readonly MetricDecl[];
  /** Series first used since the previous flush. */
  readonly series: readonly SeriesDecl[];
  /**
   * Datapoints, `POINT_STRIDE` doubles each: seriesId, value, requestRef (index into
   * `requestIds`, or `NO_REQUEST`), epoch time in ms.
   */
  readonly points: Float64Array;
  /** The request-id strings referenced by this flush's datapoints. */
  readonly requestIds: readonly string[];
  /** Datapoints the worker dropped since the previous flush, by reason (only non-zero ones). */
  readonly dropped: Readonly<Partial<Record<WorkerDropReason, number>>>;
}

/** True when `msg` claims to be a metrics message (its `type`); it may still be malformed. */
export function isMetricsMessageType(msg: unknown): boolean {
  return typeof msg === 'object' && msg !== null && (msg as { type?: unknown }).type === METRICS_MESSAGE_TYPE;
}

const METRIC_TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram']);
const DROP_REASONS: ReadonlySet<string> = new Set(WORKER_DROP_REASONS);

function isNonNegInt(x: unknown): x is number {
  return typeof x === 'number' && Number.isInteger(x) && x >= 0;
}

function isStringArray(x: unknown): x is readonly string[] {
  if (!Array.isArray(x)) return false;
  for (const s of x) if (typeof s !== 'string') return false;
  return true;
}

function checkMetricDecl(d: unknown, i: number): string | null {
  if (typeof d !== 'object' || d === null) return `metrics[${i}] is not an object`;
  const m = d as Record<string, unknown>;
  if (typeof m.name !== 'string' || m.name === '') return `metrics[${i}].name must be a non-empty string`;
  if (typeof m.type !== 'string' || !METRIC_TYPES.has(m.type)) {
    return `metrics[${i}].type must be counter, gauge or histogram`;
  }
  if (typeof m.unit !== 'string') return `metrics[${i}].unit must be a string`;
  if (!isStringArray(m.dimensions)) return `metrics[${i}].dimensions must be an array of strings`;
  return null;
}

function checkSeriesDecl(d: unknown, i: number): string | null {
  if (typeof d !== 'object' || d === null) return `series[${i}] is not an object`;
  const s = d as Record<string, unknown>;
  if (!isNonNegInt(s.id)) return `series[${i}].id must be a non-negative integer`;
  if (typeof s.metric !== 'string' || s.metric === '') return `series[${i}].metric must be a non-empty string`;
  if (!isStringArray(s.values)) return `series[${i}].values must be an array of strings`;
  return null;
}

/** Checks every datapoint's seriesId, requestRef and time; the value is checked on record. */
function checkPoints(p: Float64Array, nRequests: number): string | null {
  if (p.length % POINT_STRIDE !== 0) return `points length ${p.length} is not a multiple of ${POINT_STRIDE}`;
  for (let i = 0; i < p.length; i += POINT_STRIDE) {
    const sid = p[i];
    const ref = p[i + 2];
    const t = p[i + 3];
    if (!(sid >= 0 && Number.isInteger(sid))) return `point ${i / POINT_STRIDE}: bad series id ${sid}`;
    if (!(Number.isInteger(ref) && ref >= NO_REQUEST && ref < nRequests)) {
      return `point ${i / POINT_STRIDE}: request ref ${ref} out of range`;
    }
    if (!Number.isFinite(t)) return `point ${i / POINT_STRIDE}: time ${t} is not finite`;
  }
  return null;
}

/**
 * Validates a message received from a worker. Never throws: anything that is not a complete,
 * well-typed version-1 metrics message comes back as `{ error }` naming the first problem.
 */
export function decodeMetricsMessage(msg: unknown): MetricsMessage | { readonly error: string } {
  if (typeof msg !== 'object' || msg === null) return { error: 'message is not an object' };
  const m = msg as Record<string, unknown>;
  if (m.type !== METRICS_MESSAGE_TYPE) return { error: `type is ${JSON.stringify(m.type)}, not ${METRICS_MESSAGE_TYPE}` };
  if (m.v !== METRICS_IPC_VERSION) {
    return { error: `unsupported metrics protocol version ${JSON.stringify(m.v)} (this frontend speaks ${METRICS_IPC_VERSION})` };
  }
  if (!isNonNegInt(m.seq)) return { error: 'seq must be a non-negative integer' };
  if (!Array.isArray(m.metrics)) return { error: 'metrics must be an array' };
  for (let i = 0; i < m.metrics.length; i++) {
    const e = checkMetricDecl(m.metrics[i], i);
    if (e !== null) return { error: e };
  }
  if (!Array.isArray(m.series)) return { error: 'series must be an array' };
  for (let i = 0; i < m.series.length; i++) {
    const e = checkSeriesDecl(m.series[i], i);
    if (e !== null) return { error: e };
  }
  if (!isStringArray(m.requestIds)) return { error: 'requestIds must be an array of strings' };
  if (!(m.points instanceof Float64Array)) return { error: 'points must be a Float64Array' };
  const pe = checkPoints(m.points, m.requestIds.length);
  if (pe !== null) return { error: pe };
  if (typeof m.dropped !== 'object' || m.dropped === null || Array.isArray(m.dropped)) {
    return { error: 'dropped must be an object' };
  }
  for (const [k, n] of Object.entries(m.dropped)) {
    if (!DROP_REASONS.has(k)) return { error: `dropped has unknown reason ${JSON.stringify(k)}` };
    if (!isNonNegInt(n)) return { error: `dropped.${k} must be a non-negative integer` };
  }
  return m as unknown as MetricsMessage;
}
