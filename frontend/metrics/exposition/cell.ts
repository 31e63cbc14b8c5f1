/**
 * The counter and gauge cells of a family: one bound series each. Label text is escaped once,
 * at bind; a record is an add or a store (plus the request id when there is one, kept as the
 * series' exemplar).
 */
import { formatValue } from './escape.js';
import { exemplarText } from './exemplar.js';
import type { MergeKind } from './merge.js';
import { traceIds } from './trace-ids.js';

/**
 * The cells of a family in the order they were first written (the order prom-client rendered
 * series in); a cell joins it on its first record.
 */
export type RenderList<C> = C[];

/** One series' labels as the exposition shows them: the kept dimensions, then the automatic labels. */
export type SeriesLabels = Readonly<Record<string, string>>;

/** The labels of a series without any. */
export const NO_LABELS: SeriesLabels = Object.freeze({});

/** A bound series of a family, rendered by the family. */
export interface Cell {
  /** `{a="x"}` (escaped, hostname last) or '' for a series without labels. */
  readonly block: string;
  /** Whether the cell has a value to render (a bound series renders once recorded). */
  readonly present: boolean;
  record(value: number, requestId: string | undefined, timeMs: number | undefined, source?: string): void;
}

/** A counter: a running sum that never goes down, with its last exemplar. */
export class CounterCell implements Cell {
  value = 0;
  present = false;
  private exRequestId: string | undefined = undefined;
  private exTraceId: string | undefined = undefined;
  private exValue = 0;
  private exTimeMs = 0;

  constructor(
    readonly block: string,
    private readonly list: RenderList<CounterCell>,
    /** What `block` says, unescaped, for in-process readers (metric-cells.ts). */
    readonly labels: SeriesLabels = NO_LABELS,
  ) {}

  record(value: number, requestId: string | undefined, timeMs: number | undefined): void {
    this.value += value;
    if (!this.present) {
      this.present = true;
      this.list.push(this);
    }
    if (requestId !== undefined) {
      this.exRequestId = requestId;
      this.exTraceId = traceIds.get(requestId);
      this.exValue = value;
      this.exTimeMs = timeMs ?? Date.now();
    }
  }

  /** ` value` and, when `withExemplar` and one was kept, its exemplar. */
  sample(withExemplar: boolean): string {
    const v = ' ' + formatValue(this.value);
    return withExemplar && this.exRequestId !== undefined
      ? v + exemplarText(this.exRequestId, this.exTraceId, this.exValue, this.exTimeMs)
      : v;
  }
}

/** The gauges' write order across cells, for the `last` modes. */
let writes = 0;

/** One process's last value in a gauge cell. */
interface Contribution {
  value: number;
  seq: number;
}

/**
 * A gauge: one value per writing process, merged at render. The frontend's own writes (no
 * `source`) are two fields; a live worker's go into a small map. A worker that exits leaves
 * the map: in a `live*` mode its value goes with it; otherwise it is folded into one retired
 * contribution (the mode's merge of every exited worker's last value), so a worker restarted
 * hundreds of times costs one entry, not hundreds, and renders the same value.
 */
export class GaugeCell implements Cell {
  private own = 0;
  private ownSeq = 0;
  private hasOwn = false;
  private others: Map<string, Contribution> | null = null;
  private retired: Contribution | null = null;
  private listed = false;

  /** `onFirstWrite(source)` lets the family track which cells a process wrote, to `forget` them at its exit. */
  constructor(
    readonly block: string,
    private readonly list: RenderList<GaugeCell>,
    private readonly kind: MergeKind,
    /** A `live*` mode: an exited process's value goes instead of being retired. */
    private readonly live: boolean,
    private readonly onFirstWrite: ((source: string, cell: GaugeCell) => void) | null,
    /** A series without labels renders from the start, at 0 (as prom-client rendered it). */
    private readonly alwaysPresent = false,
    /** What `block` says, unescaped, for in-process readers (metric-cells.ts). */
    readonly labels: SeriesLabels = NO_LABELS,
  ) {
    if (alwaysPresent) this.join();
  }

  private join(): void {
    this.listed = true;
    this.list.push(this);
  }

  get present(): boolean {
    return this.hasOwn || (this.others !== null && this.others.size > 0) || this.retired !== null || this.alwaysPresent;
  }

  /** Processes whose own value this cell holds (the live ones that wrote it; exited ones are forgotten or retired). */
  get sources(): number {
    return this.others?.size ?? 0;
  }

  record(value: number, _requestId: string | undefined, _timeMs: number | undefined, source?: string): void {
    if (!this.listed) this.join();
    if (source === undefined) {
      this.own = value;
      this.ownSeq = ++writes;
      this.hasOwn = true;
      return;
    }
    const others = (this.others ??= new Map<string, Contribution>());
    const c = others.get(source);
    if (c !== undefined) {
      c.value = value;
      c.seq = ++writes;
      return;
    }
    others.set(source, { value, seq: ++writes });
    if (this.onFirstWrite !== null) this.onFirstWrite(source, this);
  }

  /** A process exited: drop its contribution (live modes) or fold it into the retired one. */
  forget(source: string): void {
    const c = this.others?.get(source);
    if (c === undefined) return;
    this.others?.delete(source);
    if (this.live) return;
    if (this.retired === null) this.retired = { value: c.value, seq: c.seq };
    else merge(this.kind, this.retired, c);
  }

  /** The merged value (0 when no process wrote one). */
  value(): number {
    if ((this.others === null || this.others.size === 0) && this.retired === null) return this.own;
    const acc: Contribution = { value: 0, seq: -1 };
    let first = true;
    if (this.hasOwn) {
      acc.value = this.own;
      acc.seq = this.ownSeq;
      first = false;
    }
    if (this.retired !== null) {
      if (first) {
        acc.value = this.retired.value;
        acc.seq = this.retired.seq;
        first = false;
      } else {
        merge(this.kind, acc, this.retired);
      }
    }
    for (const c of this.others?.values() ?? []) {
      if (first) {
        acc.value = c.value;
        acc.seq = c.seq;
        first = false;
        continue;
      }
      merge(this.kind, acc, c);
    }
    return acc.value;
  }

  /** ` value` (gauges carry no exemplars). */
  sample(): string {
    return ' ' + formatValue(this.value());
  }
}

/** Folds `c` into `acc` by `kind` (`last`: the later write by sequence wins). */
function merge(kind: MergeKind, acc: Contribution, c: Contribution): void {
  switch (kind) {
    case 'sum':
      acc.value += c.value;
      break;
    case 'max':
      if (c.value > acc.value) acc.value = c.value;
      break;
    case 'min':
      if (c.value < acc.value) acc.value = c.value;
      break;
    case 'last':
      if (c.seq > acc.seq) {
        acc.value = c.value;
        acc.seq = c.seq;
      }
      break;
  }
}
