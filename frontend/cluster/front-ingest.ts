/**
 * The primary's side of the fronts' metrics: each front's flushes (`FrontMetrics`) are folded
 * into the primary's long-lived frontend series, bound once per (front incarnation, series
 * id). The fronts' access records and log lines are written here too, so every log file has
 * exactly one writer: the primary.
 */
import type { AccessLog, Log } from '../log/log.js';
import { LOG_LEVELS } from '../log/log.js';
import type { MetricsPort, SeriesHandle } from '../models/metrics-port.js';
import type { FrontMetrics } from './messages.js';

const NOOP: SeriesHandle = { record: () => undefined };

/** Folds fronts' flushes into the primary's metrics and logs. */
export class FrontIngest {
  private readonly tables = new Map<string, SeriesHandle[]>();
  /** `tsserve_datapoints_dropped_total{reason="queue_full"}`, bound at a front's first drop. */
  private dropped: SeriesHandle | null = null;

  constructor(
    private readonly metrics: MetricsPort,
    private readonly log: Log,
    private readonly access: AccessLog | undefined,
  ) {}

  /** One flush from front `source`. Never throws. */
  handle(source: string, m: FrontMetrics): void {
    let table = this.tables.get(source);
    if (table === undefined) this.tables.set(source, (table = []));
    try {
      for (const d of m.decls) table[d.id] = this.metrics.get(d.name)?.bind(d.dims) ?? NOOP;
      for (let i = 0; i + 1 < m.counters.length; i += 2) table[m.counters[i]]?.record(m.counters[i + 1]);
      for (let i = 0; i + 1 < m.gauges.length; i += 2)
        table[m.gauges[i]]?.record(m.gauges[i + 1], undefined, undefined, source);
      for (const [id, values] of m.observations) {
        const s = table[id];
        if (s !== undefined) for (const v of values) s.record(v);
      }
      // Observations a front's full flush buffer (MAX_OBSERVATIONS_PER_FLUSH) could not hold.
      if (m.dropped > 0)
        (this.dropped ??=
          this.metrics.get('tsserve_datapoints_dropped_total')?.bind({ reason: 'queue_full' }) ?? NOOP).record(
          m.dropped,
        );
      if (this.access !== undefined) for (const r of m.access) this.access(r);
      for (const [level, msg] of m.logs)
        this.log[(LOG_LEVELS as readonly string[]).includes(level) ? level : 'warn'](`${source}: ${msg}`);
    } catch (e) {
      this.log.warn(`${source}: a metrics flush could not be folded in: ${String(e)}`);
    }
  }

  /**
   * Front `source` exited (call after its last message): its series table goes, what it flushed
   * stays in the series, and its values leave the gauges merged over live processes, as a dead
   * worker's do (a front killed and replaced in a loop left one table and one gauge entry each).
   */
  forget(source: string): void {
    this.tables.delete(source);
    this.metrics.processGone?.(source);
  }
}
