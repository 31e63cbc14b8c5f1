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
 * `source`) are two fields; a worker's go into a small map.
 */
export class GaugeCell implements Cell {
  private own = 0;
  private ownSeq = 0;
  private hasOwn = false;
  private others: Map<string, Contribution> | null = null;
  private listed = false;

  /** `onFirstWrite(source)` lets the family track which cells a process wrote (live modes). */
  constructor(
    readonly block: string,
    private readonly list: RenderList<GaugeCell>,
    private readonly kind: MergeKind,
    private readonly onFirstWrite: ((source: string, cell: GaugeCell) => void) | null,
    /** A series without labels renders from the start, at 0 (as prom-client rendered it). */
    private readonly alwaysPresent = false,
  ) {
    if (alwaysPresent) this.join();
  }

  private join(): void {
    this.listed = true;
    this.list.push(this);
  }

  get present(): boolean {
    return this.hasOwn || (this.others !== null && this.others.size > 0) || this.alwaysPresent;
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

  /** Drop a process's contribution (it exited and the mode is a live one). */
  forget(source: string): void {
    this.others?.delete(source);
  }

  /** The merged value (0 when no process wrote one). */
  value(): number {
    if (this.others === null || this.others.size === 0) return this.own;
    let acc = 0;
    let seq = -1;
    let first = true;
    if (this.hasOwn) {
      acc = this.own;
      seq = this.ownSeq;
      first = false;
    }
    for (const c of this.others.values()) {
      if (first) {
        acc = c.value;
        seq = c.seq;
        first = false;
        continue;
      }
      switch (this.kind) {
        case 'sum': acc += c.value; break;
        case 'max': if (c.value > acc) acc = c.value; break;
        case 'min': if (c.value < acc) acc = c.value; break;
        case 'last': if (c.seq > seq) { acc = c.value; seq = c.seq; } break;
      }
    }
    return acc;
  }

  /** ` value` (gauges carry no exemplars). */
  sample(): string {
    return ' ' + formatValue(this.value());
  }
}
