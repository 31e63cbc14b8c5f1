/** A recording MetricsPort fake for the generation unit tests (engine families only). */
import type { MetricSpec } from '../../../schema/types.js';
import { ENGINE_METRICS } from '../../../frontend/generation/engine-series.js';
import { defaultMetricsConfigPath, loadMetricsConfig } from '../../../schema/config/load.js';

/** The repo's metrics.yaml entries by key: the fake names its series as the default file does. */
function defaultByKey(): ReadonlyMap<string, MetricSpec> {
  const r = loadMetricsConfig(defaultMetricsConfigPath());
  if (!r.ok) throw new Error('metrics.yaml does not load');
  return new Map(r.config.metrics.filter((m) => m.key !== undefined).map((m) => [m.key as string, m]));
}

/** Every record, keyed `name{k=v,...}` (dimension values in the order given; model_name and engine left out). */
export class FakeMetrics {
  readonly records = new Map<string, number[]>();
  private readonly specs: ReadonlyMap<string, MetricSpec>;

  /** `specs`: key → entry; default the repo's metrics.yaml. */
  constructor(specs?: ReadonlyMap<string, MetricSpec>) {
    this.specs = specs ?? defaultByKey();
  }

  byKey(key: string): {
    spec: MetricSpec;
    bind(d?: Readonly<Record<string, string>> | readonly string[]): { record(v: number): void };
  } | null {
    const spec = this.specs.get(key);
    if (spec === undefined || ENGINE_METRICS[key] === undefined) return null;
    const name = spec.name;
    return {
      spec,
      bind: (d) => {
        const dims = d === undefined ? {} : (d as Readonly<Record<string, string>>);
        const extra = Object.entries(dims)
          .filter(([k]) => k !== 'model_name' && k !== 'engine')
          .map(([k, v]) => `${k}=${v}`);
        const series = extra.length > 0 ? `${name}{${extra.join(',')}}` : name;
        return {
          record: (v: number) => {
            const l = this.records.get(series) ?? [];
            l.push(v);
            this.records.set(series, l);
          },
        };
      },
    };
  }

  /** Values recorded on a series since construction (bind-time zeros included). */
  values(key: string): number[] {
    return this.records.get(key) ?? [];
  }

  /** Sum of values recorded on a series. */
  sum(key: string): number {
    return this.values(key).reduce((a, b) => a + b, 0);
  }
}
