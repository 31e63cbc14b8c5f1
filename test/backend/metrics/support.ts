/** The worker cache's test rig: a cache wired to kept messages and logs, and readers of its messages. */
import { WorkerMetrics } from '../../../backend/metrics/index.js';
import { expandDatapoints } from '../../../schema/ipc.js';
import type { MetricsMessage } from '../../../schema/ipc.js';
import { config, MODEL_SPECS } from './config.js';

/** A cache wired to an array of sent messages, a log array and a settable clock. */
export function setup(opts: { autoDetect?: boolean; maxPointsPerFlush?: number; maxSeriesPerMetric?: number } = {}) {
  const sent: MetricsMessage[] = [];
  const logs: string[] = [];
  const clock = { now: 1_700_000_000_000 };
  const wm = new WorkerMetrics(config(MODEL_SPECS, opts), {
    modelName: 'mlp',
    send: (m) => sent.push(copy(m)),
    log: (m) => logs.push(m),
    nowMs: () => clock.now,
    autoDetect: opts.autoDetect,
  });
  return { wm, sent, logs, clock };
}

/** A message with its typed arrays copied (they are views of recycled buffers). */
export function copy(m: MetricsMessage): MetricsMessage {
  return {
    ...m,
    seriesIds: m.seriesIds.slice(),
    values: m.values.slice(),
    requestRuns: m.requestRuns.slice(),
    timeRuns: m.timeRuns.slice(),
  };
}

/** The wire arrays of a message as plain arrays: seriesIds, values, requestRuns, timeRuns. */
export function wire(m: MetricsMessage): number[][] {
  return [Array.from(m.seriesIds), Array.from(m.values), Array.from(m.requestRuns), Array.from(m.timeRuns)];
}

/** Datapoints of a message as [metric, values, value, requestId|null, timeMs], series resolved. */
export function points(msgs: readonly MetricsMessage[]): Array<[string, string[], number, string | null, number]> {
  const series = new Map<number, { metric: string; values: readonly string[] }>();
  const out: Array<[string, string[], number, string | null, number]> = [];
  for (const m of msgs) {
    for (const s of m.series) series.set(s.id, s);
    for (const p of expandDatapoints(m)) {
      const s = series.get(p.seriesId)!;
      out.push([s.metric, [...s.values], p.value, p.requestId, p.timeMs]);
    }
  }
  return out;
}
