/**
 * The `prometheus` sink — the only file that imports prom-client. A private Registry holds
 * every metric from construction on, so each family has `# HELP` and `# TYPE` before any
 * sample. Label names are the spec's dimensions in yaml order, then `hostLabel` last.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { MetricSpec } from '../../../schema/types.js';
import type { MetricsLog, Sink, SinkChild, SinkMetric } from './sink.js';
import { NOOP_SINK_METRIC } from './sink.js';
import { seriesKey } from '../series-key.js';

/** Settings of the prometheus sink. */
export interface PrometheusSinkOptions {
  readonly hostname: string;
  readonly log: MetricsLog;
  /** Also expose Node process metrics (prom-client's defaults). */
  readonly processMetrics: boolean;
}

/** The exposition content type (text format 0.0.4). */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type Labels = Record<string, string>;
type AnyMetric = Counter<string> | Gauge<string> | Histogram<string>;

/**
 * prom-client's internal series map, reached only when two label sets collide under its
 * `k:v,` key (e.g. {a:'x,b:y',b:''} vs {a:'x',b:'y,b:'}): the second series then gets its own
 * entry, keyed by our unambiguous key, in the same shape prom-client renders.
 */
interface ValueEntry {
  value: number;
  labels: Labels;
}
interface HistogramEntry {
  labels: Labels;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}
interface WithHashMap {
  hashMap: Record<string, ValueEntry | HistogramEntry>;
}

/** Mirrors prom-client 15's `fastHashObject` over sorted label names. */
function promClientHash(sortedNames: readonly string[], labels: Labels): string {
  let hash = '';
  for (const k of sortedNames) hash += `${k}:${labels[k]},`;
  return hash;
}

class PromMetric implements SinkMetric {
  private readonly sortedNames: readonly string[];
  /** prom-client hash → our series key, to detect its collisions. */
  private readonly seen = new Map<string, string>();

  constructor(
    private readonly spec: MetricSpec,
    private readonly metric: AnyMetric,
    private readonly labelNames: readonly string[],
    private readonly hostname: string,
  ) {
    this.sortedNames = [...labelNames].sort();
  }

  bind(values: readonly string[]): SinkChild {
    const labels: Labels = {};
    const dims = this.spec.dimensions;
    for (let i = 0; i < dims.length; i++) labels[dims[i] as string] = values[i] as string;
    if (this.spec.hostLabel !== null) labels[this.spec.hostLabel] = this.hostname;
    if (this.labelNames.length > 0) {
      const hash = promClientHash(this.sortedNames, labels);
      const key = seriesKey(values);
      const owner = this.seen.get(hash);
      if (owner === undefined) this.seen.set(hash, key);
      else if (owner !== key) return this.privateChild(key, labels);
    }
    const m = this.metric;
    if (m instanceof Counter) {
      const c = this.labelNames.length > 0 ? m.labels(labels) : m;
      return { record: (v: number): void => c.inc(v) };
    }
    if (m instanceof Gauge) {
      const g = this.labelNames.length > 0 ? m.labels(labels) : m;
      return { record: (v: number): void => g.set(v) };
    }
    const h = this.labelNames.length > 0 ? m.labels(labels) : m;
    return { record: (v: number): void => h.observe(v) };
  }

  /** A series kept in its own hashMap entry (see `WithHashMap`). */
  private privateChild(key: string, labels: Labels): SinkChild {
    // eslint-disable-next-line no-restricted-properties -- collision fallback; goes when the exposition rewrite (issue 7) drops prom-client's series map
    const map = (this.metric as unknown as WithHashMap).hashMap;
    const slot = '\u0000' + key;
    if (this.spec.type === 'histogram') {
      const bounds = this.spec.buckets.length > 0 ? this.spec.buckets : HISTOGRAM_DEFAULT_BUCKETS;
      const bucketValues: Record<string, number> = {};
      for (const b of bounds) bucketValues[b] = 0;
      const entry: HistogramEntry = { labels, bucketValues, sum: 0, count: 0 };
      map[slot] = entry;
      return {
        record(v: number): void {
          for (const b of bounds) {
            if (v <= b) {
              (entry.bucketValues[b] as number)++;
              break;
            }
          }
          entry.sum += v;
          entry.count += 1;
        },
      };
    }
    const entry: ValueEntry = { value: 0, labels };
    map[slot] = entry;
    return this.spec.type === 'counter'
      ? { record: (v: number): void => void (entry.value += v) }
      : { record: (v: number): void => void (entry.value = v) };
  }
}

/** prom-client's default buckets, used when a histogram declares none. */
const HISTOGRAM_DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Help text with the unit, as Prometheus has no unit field in text format 0.0.4. */
export function prometheusHelp(spec: MetricSpec): string {
  const help = spec.help.trim();
  return help.length > 0 ? `${help} (unit: ${spec.unit})` : `${spec.name} (unit: ${spec.unit})`;
}

/** Keeps every metric in a private prom-client Registry and renders the exposition text. */
export class PrometheusSink implements Sink {
  readonly mode = 'prometheus' as const;
  private readonly registry = new Registry();

  constructor(private readonly opts: PrometheusSinkOptions) {
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  metric(spec: MetricSpec): SinkMetric {
    const labelNames = spec.hostLabel === null ? [...spec.dimensions] : [...spec.dimensions, spec.hostLabel];
    const base = { name: spec.name, help: prometheusHelp(spec), labelNames, registers: [this.registry] };
    try {
      const m: AnyMetric =
        spec.type === 'counter'
          ? new Counter(base)
          : spec.type === 'gauge'
            ? new Gauge(base)
            : new Histogram(spec.buckets.length > 0 ? { ...base, buckets: [...spec.buckets] } : base);
      return new PromMetric(spec, m, labelNames, this.opts.hostname);
    } catch (err) {
      // A name prom-client refuses (or one already taken) must not take the other sinks down.
      this.opts.log('error', `prometheus: cannot register ${spec.name}: ${String(err)}`);
      return NOOP_SINK_METRIC;
    }
  }

  /** The exposition text; `names` keeps only those families (unknown names render nothing). */
  async text(names?: readonly string[]): Promise<string> {
    if (names === undefined || names.length === 0) return this.registry.metrics();
    const parts: string[] = [];
    for (const name of new Set(names)) {
      if (this.registry.getSingleMetric(name) !== undefined) {
        parts.push(await this.registry.getSingleMetricAsString(name));
      }
    }
    return parts.length === 0 ? '' : parts.join('\n\n') + '\n';
  }

  async close(): Promise<void> {
    // Nothing to flush: the registry is read on scrape. It stays readable after close.
  }
}
