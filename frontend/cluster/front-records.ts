/**
 * The primary's side of a front's flushes: the metrics go to the ingest that folds in the
 * workers' (the same `MetricsMessage`, caps and drop ledger), told once per front which
 * frontend metrics it may record; the access records and log lines are written here, so every
 * log file has exactly one writer: the primary.
 */
import type { AccessLog, Log } from '../log/log.js';
import { LOG_LEVELS } from '../log/log.js';
import type { FrontMetrics } from './messages.js';
import { FRONT_METRICS } from './front-port.js';

/** What the primary's metrics ingest offers for fronts (`MetricsIngest`). */
export interface FrontMetricsIngest {
  handle(source: string, msg: unknown): boolean;
  forget(source: string): void;
  /** `source` records frontend metrics (these names), not model metrics. */
  acceptFrom?(source: string, names: ReadonlySet<string>): void;
}

const FRONT_NAMES: ReadonlySet<string> = new Set(FRONT_METRICS);

/** Folds fronts' flushes into the primary's metrics and logs. */
export class FrontRecords {
  private readonly known = new Set<string>();

  constructor(
    private readonly ingest: FrontMetricsIngest,
    private readonly log: Log,
    private readonly access: AccessLog | undefined,
  ) {}

  /** One flush from front `source`. Never throws. */
  handle(source: string, m: FrontMetrics): void {
    try {
      if (!this.known.has(source)) {
        this.known.add(source);
        this.ingest.acceptFrom?.(source, FRONT_NAMES);
      }
      if (m.metrics !== null) this.ingest.handle(source, m.metrics);
      if (this.access !== undefined) for (const r of m.access) this.access(r);
      for (const [level, msg] of m.logs)
        this.log[(LOG_LEVELS as readonly string[]).includes(level) ? level : 'warn'](`${source}: ${msg}`);
    } catch (e) {
      this.log.warn(`${source}: a metrics flush could not be folded in: ${String(e)}`);
    }
  }

  /**
   * Front `source` exited (call after its last message): the ingest forgets its series table,
   * what it flushed stays in the series, and its values leave the gauges merged over live
   * processes, as a dead worker's do.
   */
  forget(source: string): void {
    this.known.delete(source);
    this.ingest.forget(source);
  }
}
