/** A family rendered by someone else (prom-client's process metrics), as plain samples. */

/** One sample: its full name, label block (`{a="x"}` or ''), value. */
export interface ForeignSample {
  readonly name: string;
  readonly block: string;
  readonly value: number;
}

/** One family of foreign samples, rendered by our text and OpenMetrics renderers. */
export interface ForeignFamily {
  readonly name: string;
  readonly help: string;
  /** `counter`, `gauge`, `histogram`, `summary` or `untyped`. */
  readonly type: string;
  readonly samples: readonly ForeignSample[];
}
