/**
 * The metrics flush protocol: what a worker sends the frontend over the fork IPC channel.
 *
 * Workers are forked with `serialization: 'advanced'` (V8 structured clone), so typed arrays
 * travel as their bytes, not JSON. Each series (metric + dimension values) is declared once, in
 * the first flush that uses it, and referenced by a small integer afterwards. A datapoint is
 * then 12 bytes: its series id (Uint32Array) and its value (Float64Array). Its request id and
 * time change per batch or per flush, not per point, so they travel run-length encoded: pairs
 * (start index, request ref) and (start index, epoch ms). See docs/ipc.md.
 */
import { METRIC_TYPES } from './types.js';
import type { MetricType } from './types.js';
import type { DropReason } from './metrics-api.js';
import { isDropReason } from './metrics-api.js';

/** Protocol version; a message with another `v` is rejected with a reason. */
export const METRICS_IPC_VERSION = 3;

/** The message `type`, in the `tsserve.` namespace shared with the control messages. */
export const METRICS_MESSAGE_TYPE = 'tsserve.metrics';

/** Numbers per run in `requestRuns` and `timeRuns`: start index, then the ref or the time. */
export const RUN_STRIDE = 2;

/** Request ref of datapoints that carry no request id. */
export const NO_REQUEST = -1;

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
  /** Series id of each datapoint (declared in this flush or an earlier one). */
  readonly seriesIds: Uint32Array;
  /** Value of each datapoint; as long as `seriesIds`. */
  readonly values: Float64Array;
  /**
   * Request-id runs, `RUN_STRIDE` numbers each: the index of the first datapoint of the run
   * and its request ref (an index into `requestIds`, or `NO_REQUEST`). A run lasts until the
   * next one starts; the first starts at 0; starts strictly increase and are below the number
   * of datapoints (empty when there are none).
   */
  readonly requestRuns: Int32Array;
  /** The request-id strings the runs reference (this flush only). */
  readonly requestIds: readonly string[];
  /** Time runs, `RUN_STRIDE` numbers each: first datapoint index, epoch ms. Same rules. */
  readonly timeRuns: Float64Array;
  /** Datapoints the worker dropped since the previous flush, by reason (only non-zero ones). */
  readonly dropped: Readonly<Partial<Record<DropReason, number>>>;
  /**
   * New series the worker folded into a metric's overflow series since the previous flush, by
   * metric name (only non-zero ones); the frontend adds them to `tsserve_series_overflow_total`.
   */
  readonly overflowed: Readonly<Record<string, number>>;
}

/** True when `msg` claims to be a metrics message (its `type`); it may still be malformed. */
export function isMetricsMessageType(msg: unknown): boolean {
  return typeof msg === 'object' && msg !== null && (msg as { type?: unknown }).type === METRICS_MESSAGE_TYPE;
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(METRIC_TYPES);

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
  if (typeof m.type !== 'string' || !KNOWN_TYPES.has(m.type)) {
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

/**
 * Checks a run array against `count` datapoints: pairs, the first at 0, starts strictly
 * increasing and below `count` (none when `count` is 0), and each run's payload via `payload`.
 * O(runs), never O(datapoints).
 */
function checkRuns(
  name: string,
  r: Int32Array | Float64Array,
  count: number,
  payload: (x: number, k: number) => string | null,
): string | null {
  if (r.length % RUN_STRIDE !== 0) return `${name} length ${r.length} is not a multiple of ${RUN_STRIDE}`;
  if (count === 0) return r.length === 0 ? null : `${name} must be empty when there are no datapoints`;
  if (r.length === 0) return `${name} is empty but there are ${count} datapoints`;
  let prev = -1;
  for (let i = 0; i < r.length; i += RUN_STRIDE) {
    const k = i / RUN_STRIDE;
    const start = r[i];
    if (!Number.isInteger(start)) return `${name}[${k}] start ${start} is not an integer`;
    if (k === 0 && start !== 0) return `${name}[0] starts at ${start}, not 0`;
    if (start <= prev) return `${name}[${k}] start ${start} does not follow ${prev}`;
    if (start >= count) return `${name}[${k}] start ${start} is past the last datapoint (${count - 1})`;
    prev = start;
    const e = payload(r[i + 1], k);
    if (e !== null) return e;
  }
  return null;
}

/** Checks the datapoint arrays and their runs; the values are checked on record. */
function checkPoints(m: Record<string, unknown>, nRequests: number): string | null {
  if (!(m.seriesIds instanceof Uint32Array)) return 'seriesIds must be a Uint32Array';
  if (!(m.values instanceof Float64Array)) return 'values must be a Float64Array';
  const count = m.seriesIds.length;
  if (m.values.length !== count) return `values has ${m.values.length} datapoints, seriesIds ${count}`;
  if (!(m.requestRuns instanceof Int32Array)) return 'requestRuns must be an Int32Array';
  const re = checkRuns('requestRuns', m.requestRuns, count, (ref, k) =>
    ref >= NO_REQUEST && ref < nRequests ? null : `requestRuns[${k}] request ref ${ref} out of range`,
  );
  if (re !== null) return re;
  if (!(m.timeRuns instanceof Float64Array)) return 'timeRuns must be a Float64Array';
  return checkRuns('timeRuns', m.timeRuns, count, (t, k) =>
    Number.isFinite(t) ? null : `timeRuns[${k}] time ${t} is not finite`,
  );
}

/**
 * Validates a message received from a worker. Never throws: anything that is not a complete,
 * well-typed version-3 metrics message comes back as `{ error }` naming the first problem.
 */
export function decodeMetricsMessage(msg: unknown): MetricsMessage | { readonly error: string } {
  if (typeof msg !== 'object' || msg === null) return { error: 'message is not an object' };
  const m = msg as Record<string, unknown>;
  if (m.type !== METRICS_MESSAGE_TYPE)
    return { error: `type is ${JSON.stringify(m.type)}, not ${METRICS_MESSAGE_TYPE}` };
  if (m.v !== METRICS_IPC_VERSION) {
    return {
      error: `unsupported metrics protocol version ${JSON.stringify(m.v)} (this frontend speaks ${METRICS_IPC_VERSION})`,
    };
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
  const pe = checkPoints(m, m.requestIds.length);
  if (pe !== null) return { error: pe };
  if (typeof m.dropped !== 'object' || m.dropped === null || Array.isArray(m.dropped)) {
    return { error: 'dropped must be an object' };
  }
  for (const [k, n] of Object.entries(m.dropped)) {
    if (!isDropReason(k)) return { error: `dropped has unknown reason ${JSON.stringify(k)}` };
    if (!isNonNegInt(n)) return { error: `dropped.${k} must be a non-negative integer` };
  }
  if (typeof m.overflowed !== 'object' || m.overflowed === null || Array.isArray(m.overflowed)) {
    return { error: 'overflowed must be an object' };
  }
  for (const [k, n] of Object.entries(m.overflowed)) {
    if (!isNonNegInt(n)) return { error: `overflowed.${k} must be a non-negative integer` };
  }
  return m as unknown as MetricsMessage;
}

/**
 * Cuts a decoded message's datapoints into segments that share one request id and one time:
 * calls `fn(from, to, requestId, timeMs)` for datapoints `from` (inclusive) to `to`
 * (exclusive), in order. O(runs); the caller walks the datapoints of each segment.
 */
export function forEachSegment(
  msg: MetricsMessage,
  fn: (from: number, to: number, requestId: string | undefined, timeMs: number) => void,
): void {
  const rr = msg.requestRuns;
  const tr = msg.timeRuns;
  const n = msg.seriesIds.length;
  let ri = 0;
  let ti = 0;
  for (let i = 0; i < n;) {
    const ref = rr[ri + 1];
    const rEnd = ri + RUN_STRIDE < rr.length ? rr[ri + RUN_STRIDE] : n;
    const tEnd = ti + RUN_STRIDE < tr.length ? tr[ti + RUN_STRIDE] : n;
    const end = rEnd < tEnd ? rEnd : tEnd;
    fn(i, end, ref === NO_REQUEST ? undefined : msg.requestIds[ref], tr[ti + 1]);
    i = end;
    if (end === rEnd) ri += RUN_STRIDE;
    if (end === tEnd) ti += RUN_STRIDE;
  }
}

/** One datapoint of a message, expanded (for tests and tools; the ingest walks segments). */
export interface Datapoint {
  readonly seriesId: number;
  readonly value: number;
  /** The request id, or null when the datapoint carries none. */
  readonly requestId: string | null;
  readonly timeMs: number;
}

/** Every datapoint of a decoded message, in order, with its request id and time resolved. */
export function expandDatapoints(msg: MetricsMessage): Datapoint[] {
  const out: Datapoint[] = [];
  forEachSegment(msg, (from, to, requestId, timeMs) => {
    for (let i = from; i < to; i++) {
      out.push({ seriesId: msg.seriesIds[i], value: msg.values[i], requestId: requestId ?? null, timeMs });
    }
  });
  return out;
}
