/**
 * Why a datapoint was dropped. Every drop is counted in `tsserve_datapoints_dropped_total{reason}`
 * and warned about once per (metric, reason); a record call never throws.
 */
export type DropReason =
  /** NaN, ±Infinity or not a number at all. */
  | 'not_finite'
  /** A counter increment below zero (counters only go up). */
  | 'negative_counter'
  /** Wrong number of dimension values, an unknown dimension name, or a non-string value. */
  | 'bad_dimensions'
  /** A request id that is not a string. */
  | 'bad_request_id'
  /** A datapoint for a metric that is neither declared nor auto-detectable. */
  | 'unknown_metric'
  /** A metric registered again with another type or other dimensions. */
  | 'type_mismatch'
  /** An IPC metrics message that does not have the expected shape. */
  | 'malformed_message'
  /** A sink threw while recording (the other sinks still got the datapoint). */
  | 'sink_error'
  /** A handler helper given a unit it does not take (`addTime` in `h`, `addSize` in `TB`). */
  | 'bad_unit';

/** Every drop reason, in a stable order (the self-metric binds one series per reason). */
export const DROP_REASONS: readonly DropReason[] = Object.freeze([
  'not_finite',
  'negative_counter',
  'bad_dimensions',
  'bad_request_id',
  'unknown_metric',
  'type_mismatch',
  'malformed_message',
  'sink_error',
  'bad_unit',
]);
