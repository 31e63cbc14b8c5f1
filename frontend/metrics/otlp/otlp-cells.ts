/**
 * The values the otlp sink exports, held in the same families (and so with the same merge,
 * retire and present rules) as the Prometheus exposition: each bound series keeps its cell and
 * its attributes, and a collection reads every present cell into plain points. Cumulative points
 * are the cells' values; delta points subtract what the previous collection exported.
 */
import type { MetricSpec } from '../../../schema/types.js';
import type { BoundAutoLabels } from '../../../schema/auto-labels.js';
import { keptDimensions } from '../../../schema/auto-labels.js';
import { unitKind } from '../../../schema/config/units.js';
import type { SinkChild, SinkMetric } from '../sinks/sink.js';
import type { CounterCell, GaugeCell } from '../exposition/cell.js';
import type { HistogramCell } from '../exposition/histogram-cell.js';
import { CounterFamily, GaugeFamily, HistogramFamily, prometheusHelp } from '../exposition/family.js';
import type { GaugeWriteTracker } from '../exposition/family.js';
import { counterFamilyName } from '../exposition/units.js';

/** How points are exported: running totals (OTLP's and Prometheus's default) or per-interval changes. */
export type OtlpTemporality = 'cumulative' | 'delta';

/** One exported point: a number (counter, gauge) or a histogram's buckets. */
export interface OtlpPoint {
  readonly attributes: Readonly<Record<string, string>>;
  /** Epoch ms the point's interval starts at (a series' first bind, or the previous collection for delta). */
  readonly startMs: number;
  readonly value: number | OtlpHistogramValue;
}

/** A histogram point: per-bucket counts (not cumulative), `boundaries.length + 1` of them. */
export interface OtlpHistogramValue {
  readonly boundaries: readonly number[];
  readonly counts: readonly number[];
  readonly sum: number;
  readonly count: number;
}

/** One metric's points of one collection. */
export interface OtlpMetric {
  readonly name: string;
  readonly description: string;
  readonly unit: string;
  readonly kind: 'sum' | 'gauge' | 'histogram';
  readonly points: readonly OtlpPoint[];
}

/** metrics.yaml's free unit strings as UCUM, as OTLP expects (`ms`, `s`, `By`, `1`, `{request}`). */
export function ucumUnit(unit: string): string {
  const u = unit.trim();
  switch (unitKind(u)) {
    case 'milliseconds':
      return 'ms';
    case 'microseconds':
      return 'us';
    case 'seconds':
      return 's';
    case 'percent':
      return '%';
    case 'ratio':
      return '1';
    case 'bytes':
      return 'By';
    case 'scaled_bytes': {
      const l = u.toLowerCase();
      const prefix = l.startsWith('k') ? 'k' : l.startsWith('m') ? 'M' : l.startsWith('g') ? 'G' : 'T';
      return l.includes('i') && !l.includes('byte') ? `${prefix === 'k' ? 'K' : prefix}iBy` : `${prefix}By`;
    }
    case 'count':
      return u === '' ? '1' : `{${u}}`;
    default:
      return u;
  }
}

/** One bound series: its attributes, cell and what delta temporality last exported. */
interface Series<C> {
  readonly attributes: Readonly<Record<string, string>>;
  readonly cell: C;
  startMs: number;
  lastValue: number;
  lastCounts: Float64Array | null;
  lastSum: number;
  lastCount: number;
}

/** The attributes of a series: the kept dimensions in yaml order, then the automatic labels. */
function attributesOf(spec: MetricSpec, values: readonly string[], auto: BoundAutoLabels): Record<string, string> {
  const out: Record<string, string> = {};
  const names = keptDimensions(spec.dimensions, auto);
  const kept = keptDimensions(values, auto);
  names.forEach((n, i) => (out[n] = kept[i] as string));
  auto.names.forEach((n, i) => (out[n] = auto.values[i] as string));
  return out;
}

/** One declared metric's series for the otlp sink. */
export class OtlpFamily implements SinkMetric {
  private readonly family: CounterFamily | GaugeFamily | HistogramFamily;
  private readonly series: Series<CounterCell | GaugeCell | HistogramCell>[] = [];
  private readonly seen = new Set<SinkChild>();
  private readonly boundaries: readonly number[];

  constructor(
    readonly spec: MetricSpec,
    tracker: GaugeWriteTracker,
    private readonly nowMs: () => number,
  ) {
    this.family =
      spec.type === 'counter'
        ? new CounterFamily(spec)
        : spec.type === 'gauge'
          ? new GaugeFamily(spec, tracker)
          : new HistogramFamily(spec);
    this.boundaries = this.family instanceof HistogramFamily ? this.family.boundaries() : [];
    // A series without labels is there from the start (the family made it), as in the exposition.
    if (spec.dimensions.length === 0 && spec.hostLabel === null) this.bind([], NO_AUTO_LABELS);
  }

  bind(values: readonly string[], auto: BoundAutoLabels): SinkChild {
    const cell = this.family.bind(values, auto);
    if (!this.seen.has(cell)) {
      this.seen.add(cell);
      this.series.push({
        attributes: attributesOf(this.spec, values, auto),
        cell: cell as CounterCell | GaugeCell | HistogramCell,
        startMs: this.nowMs(),
        lastValue: 0,
        lastCounts: null,
        lastSum: 0,
        lastCount: 0,
      });
    }
    return cell;
  }

  /** This metric's points now; with `delta`, each counter and histogram point is the change since the last collection. */
  collect(temporality: OtlpTemporality, nowMs: number): OtlpMetric {
    const points: OtlpPoint[] = [];
    const delta = temporality === 'delta';
    for (const s of this.series) {
      if (!s.cell.present) continue;
      const startMs = s.startMs;
      if (this.spec.type === 'gauge') {
        points.push({ attributes: s.attributes, startMs, value: (s.cell as GaugeCell).value() });
      } else if (this.spec.type === 'counter') {
        const total = (s.cell as CounterCell).value;
        points.push({ attributes: s.attributes, startMs, value: delta ? total - s.lastValue : total });
        if (delta) {
          s.lastValue = total;
          s.startMs = nowMs;
        }
      } else {
        const h = s.cell as HistogramCell;
        const counts = Array.from(h.counts);
        if (delta && s.lastCounts !== null) for (let i = 0; i < counts.length; i++) counts[i]! -= s.lastCounts[i]!;
        points.push({
          attributes: s.attributes,
          startMs,
          value: {
            boundaries: this.boundaries,
            counts,
            sum: delta ? h.sum - s.lastSum : h.sum,
            count: delta ? h.count - s.lastCount : h.count,
          },
        });
        if (delta) {
          s.lastCounts = Float64Array.from(h.counts);
          s.lastSum = h.sum;
          s.lastCount = h.count;
          s.startMs = nowMs;
        }
      }
    }
    const kind = this.spec.type === 'counter' ? 'sum' : this.spec.type;
    return {
      // A counter without `_total`: an OTLP → Prometheus exporter adds it back, as for any OTel sum.
      name: this.spec.type === 'counter' ? counterFamilyName(this.spec.name) : this.spec.name,
      description: this.spec.help.trim() === '' ? prometheusHelp(this.spec) : this.spec.help.trim(),
      unit: ucumUnit(this.spec.unit),
      kind,
      points,
    };
  }
}

/** No automatic labels (the unlabelled series). */
const NO_AUTO_LABELS: BoundAutoLabels = Object.freeze({
  hostname: '',
  names: [],
  values: [],
  isHostname: [],
  key: '',
  omitted: [],
});
