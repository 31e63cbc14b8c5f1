/** A recording MetricsPort fake for the generation unit tests (engine families only). */
import type { MetricSpec } from '../../../schema/types.js';
import { ENGINE_METRICS } from '../../../frontend/generation/engine-series.js';

/** Every record, keyed `name{k=v,...}` (dimension values in the order given). */
export class FakeMetrics {
  readonly records = new Map<string, number[]>();

  get(name: string): { spec: MetricSpec; bind(d?: Readonly<Record<string, string>> | readonly string[]): { record(v: number): void } } | null {
    const e = ENGINE_METRICS[name];
    if (e === undefined) return null;
    const spec: MetricSpec = {
      name, section: 'ts_metrics', type: e.type, unit: '', dimensions: ['model_name', 'engine', ...e.extra],
      hostLabel: null, help: '', buckets: [], pos: null,
    };
    return {
      spec,
      bind: (d) => {
        const dims = d === undefined ? {} : (d as Readonly<Record<string, string>>);
        const extra = Object.entries(dims).filter(([k]) => k !== 'model_name' && k !== 'engine').map(([k, v]) => `${k}=${v}`);
        const key = extra.length > 0 ? `${name}{${extra.join(',')}}` : name;
        return { record: (v: number) => { const l = this.records.get(key) ?? []; l.push(v); this.records.set(key, l); } };
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
