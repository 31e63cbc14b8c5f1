/**
 * The worker cache when metrics are off (`--metrics-mode off`, carried in the init message):
 * every lookup returns a silent metric, every helper returns at once, and nothing is ever sent.
 * Chosen once, at construction, so the handler's record path pays nothing for the switch.
 */
import type { MetricType } from '../../schema/types.js';
import type { AutoLabels } from '../../schema/metrics-api.js';
import { show } from './dimensions.js';
import { SilentMetric } from './worker-metric.js';
import type { WorkerMetric } from './worker-metric.js';
import type { WorkerMetricsApi } from './worker-metrics-api.js';

/** A `WorkerMetricsApi` that records nothing and sends nothing. */
export class DisabledWorkerMetrics implements WorkerMetricsApi {
  readonly dropped: Readonly<Record<string, number>> = Object.freeze({});
  readonly autoLabels: AutoLabels;

  constructor(autoLabels: AutoLabels) {
    this.autoLabels = Object.freeze({ ...autoLabels });
  }

  setRequestIds(): void {}

  records(): boolean {
    return false;
  }

  addMetric(name: string, unit: string, dimensionNames?: readonly string[], type?: MetricType): WorkerMetric {
    return new SilentMetric(
      show(name),
      type ?? 'counter',
      show(unit),
      Array.isArray(dimensionNames) ? dimensionNames : [],
    );
  }

  getMetric(name: string, type?: MetricType): WorkerMetric {
    return new SilentMetric(show(name), type ?? 'counter', '', []);
  }

  addCounter(): void {}
  addTime(): void {}
  addSize(): void {}
  addPercent(): void {}

  flush(): number {
    return 0;
  }
}
