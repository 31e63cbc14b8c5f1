/**
 * The `prometheus` sink: our own exposition (frontend/metrics/exposition) of every declared
 * family, in the text format 0.0.4 or OpenMetrics 1.0, with prom-client's process and runtime
 * metrics (read through its public API) appended when asked for.
 */
import type { MetricSpec } from '../../../schema/types.js';
import type { MetricsLog, Sink, SinkMetric } from './sink.js';
import { NOOP_SINK_METRIC } from './sink.js';
import type { GaugeCell } from '../exposition/cell.js';
import { CounterFamily, GaugeFamily, HistogramFamily } from '../exposition/family.js';
import type { Family } from '../exposition/family.js';
import type { ExpositionFormat } from '../exposition/negotiate.js';
import type { ForeignFamily } from '../exposition/foreign-family.js';
import { claimExposedNames, exposureClashes } from '../../../schema/config/exposed-names.js';
import type { ExposedOwner } from '../../../schema/config/exposed-names.js';
import { openMetricsDocument, openMetricsForeign } from '../exposition/openmetrics-renderer.js';
import { ProcessMetrics } from '../exposition/process-metrics.js';
import type { ProcessPeers } from '../exposition/process-metrics.js';
import { TEXT_CONTENT_TYPE, textDocument, textForeign } from '../exposition/text-renderer.js';
import { keepSamples, selectFamilies } from '../exposition/name-filter.js';
import type { MetricCells, SeriesLabels } from '../metric-cells.js';
import type { FamilyType } from '../exposition/name-filter.js';

/** Settings of the prometheus sink. */
export interface PrometheusSinkOptions {
  readonly log: MetricsLog;
  /** Also expose Node process metrics (prom-client's defaults). */
  readonly processMetrics: boolean;
  /** Other processes' process metrics, merged in with a `pid` label (`--api-server-count N`). */
  readonly processPeers?: ProcessPeers;
}

/** The exposition content type (text format 0.0.4). */
export const PROMETHEUS_CONTENT_TYPE = TEXT_CONTENT_TYPE;

const METRIC_NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Why Prometheus would refuse this metric's names, or null when they are fine. */
function badNames(spec: MetricSpec, labelNames: readonly string[]): string | null {
  if (!METRIC_NAME_RE.test(spec.name)) return `invalid metric name ${JSON.stringify(spec.name)}`;
  const seen = new Set<string>();
  for (const l of labelNames) {
    if (!LABEL_NAME_RE.test(l) || l.startsWith('__')) return `invalid label name ${JSON.stringify(l)}`;
    if (spec.type === 'histogram' && l === 'le') return 'a histogram cannot have a label named le';
    if (seen.has(l)) return `label ${l} appears twice`;
    seen.add(l);
  }
  return null;
}

/** A process family's block in either format. */
function foreignBlock(p: ForeignFamily, om: boolean): string {
  return om ? openMetricsForeign(p) : textForeign(p);
}

/** Keeps one family per metric, renders the exposition, and lets in-process readers read the cells. */
export class PrometheusSink implements Sink, MetricCells {
  readonly mode = 'prometheus' as const;
  private readonly families = new Map<string, Family>();
  /** Every name the declared families take (`X_count`, `X_total`…), so a process family cannot claim one too. */
  private readonly claimed = new Map<string, ExposedOwner>();
  /** Process families left out because a declared family claims one of their names, warned once each. */
  private readonly shadowed = new Set<string>();
  private readonly process: ProcessMetrics | null;
  /** Gauge cells each worker wrote, told when it exits (its values dropped or retired by the family's mode). */
  private readonly liveCells = new Map<string, Set<GaugeCell>>();
  private readonly track = (source: string, cell: GaugeCell): void => {
    let set = this.liveCells.get(source);
    if (set === undefined) this.liveCells.set(source, (set = new Set()));
    set.add(cell);
  };

  constructor(private readonly opts: PrometheusSinkOptions) {
    this.process = opts.processMetrics ? new ProcessMetrics() : null;
    if (opts.processPeers !== undefined) this.process?.withPeers(opts.processPeers);
  }

  metric(spec: MetricSpec): SinkMetric {
    const labelNames = spec.hostLabel === null ? spec.dimensions : [...spec.dimensions, spec.hostLabel];
    const bad = this.families.has(spec.name) ? `${spec.name} is already registered` : badNames(spec, labelNames);
    if (bad !== null) {
      // A name Prometheus refuses must not take the other sinks down.
      this.opts.log('error', `prometheus: cannot register ${spec.name}: ${bad}`);
      return NOOP_SINK_METRIC;
    }
    const f: Family =
      spec.type === 'counter'
        ? new CounterFamily(spec)
        : spec.type === 'gauge'
          ? new GaugeFamily(spec, this.track)
          : new HistogramFamily(spec);
    this.families.set(spec.name, f);
    claimExposedNames(spec.name, spec.type, '', this.claimed);
    return f;
  }

  /**
   * The process families to render: one a declared metric clashes with (a yaml gauge named
   * `process_open_fds`) is left out, with one warning, since two families of one name make the
   * whole scrape fail; the declared one is what the yaml asked for.
   */
  private async processFamilies(): Promise<ForeignFamily[]> {
    if (this.process === null) return [];
    const out: ForeignFamily[] = [];
    for (const p of await this.process.families()) {
      const type =
        p.type === 'counter' || p.type === 'histogram' ? p.type : p.type === 'summary' ? 'histogram' : 'gauge';
      const clash = exposureClashes(p.name, type, this.claimed, null)[0];
      if (clash === undefined) {
        out.push(p);
        continue;
      }
      if (!this.shadowed.has(p.name)) {
        this.shadowed.add(p.name);
        this.opts.log(
          'warn',
          `prometheus: the process metric ${p.name} is not exposed: ${clash.replace(/; rename one of them$/, '')}; rename the metrics.yaml one to get it back`,
        );
      }
    }
    return out;
  }

  /** A process (worker) exited: drop what it wrote into live-merge gauges and retire it from the others. */
  processGone(source: string): void {
    const cells = this.liveCells.get(source);
    if (cells === undefined) return;
    this.liveCells.delete(source);
    for (const c of cells) c.forget(source);
  }

  /**
   * The exposition in `format`; `names` keeps only what they name (name-filter.ts: a family, or
   * some samples of one), each family once in the order asked; unknown names render nothing.
   */
  async render(format: ExpositionFormat, names?: readonly string[]): Promise<string> {
    const om = format === 'openmetrics';
    const blocks: string[] = [];
    const filter = names === undefined || names.length === 0 ? undefined : names;
    if (filter === undefined) {
      for (const f of this.families.values()) blocks.push(om ? f.openMetrics() : f.text());
      for (const p of await this.processFamilies()) blocks.push(om ? openMetricsForeign(p) : textForeign(p));
    } else {
      // Process families are collected only when a name is not a declared family's.
      const process = filter.every((n) => this.families.has(n))
        ? new Map<string, ForeignFamily>()
        : new Map((await this.processFamilies()).map((p) => [p.name, p]));
      const typeOf = (n: string): FamilyType | undefined =>
        this.families.get(n)?.spec.type ?? (process.get(n)?.type as FamilyType | undefined);
      for (const sel of selectFamilies(filter, typeOf)) {
        const f = this.families.get(sel.family);
        const block =
          f !== undefined
            ? om
              ? f.openMetrics()
              : f.text()
            : foreignBlock(process.get(sel.family) as ForeignFamily, om);
        blocks.push(sel.samples === null ? block : keepSamples(block, sel.samples));
      }
    }
    return om ? openMetricsDocument(blocks) : textDocument(blocks, filter !== undefined);
  }

  eachValue(name: string, fn: (labels: SeriesLabels, value: number) => void): boolean {
    const f = this.families.get(name);
    if (!(f instanceof CounterFamily || f instanceof GaugeFamily)) return false;
    f.eachValue(fn);
    return true;
  }

  histogramBounds(name: string): readonly number[] | null {
    const f = this.families.get(name);
    return f instanceof HistogramFamily ? f.boundaries() : null;
  }

  eachHistogram(
    name: string,
    fn: (labels: SeriesLabels, counts: Float64Array, sum: number, count: number) => void,
  ): boolean {
    const f = this.families.get(name);
    if (!(f instanceof HistogramFamily)) return false;
    f.eachSeries(fn);
    return true;
  }

  async close(): Promise<void> {
    // Nothing to flush: families are read on scrape. They stay readable after close.
  }
}
