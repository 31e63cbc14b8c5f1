/**
 * What `tsserve start` warns about a metrics.yaml that loads, said by `tsserve metrics validate`
 * at each entry's position: an engine family declared with another type or other dimensions
 * (start switches it off: frontend/generation/engine-series.ts), a deprecated metric still
 * shown, and one hidden at this version (start names both in one line:
 * schema/config/stability.ts). The errors start refuses to run with are the loader's problems
 * and the frontend metrics' check; these are the rest.
 */
import type { MetricSpec, MetricsConfig } from '../../schema/types.js';
import { deprecationNotice, metricState } from '../../schema/config/stability.js';
import { checkEngineMetrics } from '../../frontend/generation/engine-series.js';

/** One warning: where its entry is (null for a config built in memory) and what start does. */
export interface StartWarning {
  readonly spec: MetricSpec;
  readonly message: string;
}

/** Start's warnings about `config` at server `version`, in file order. */
export function startWarnings(config: MetricsConfig, version: string): StartWarning[] {
  const byKey = new Map(config.metrics.flatMap((m) => (m.key === undefined ? [] : [[m.key, { spec: m }] as const])));
  const engine = checkEngineMetrics({ byKey: (k) => byKey.get(k) ?? null } as Parameters<typeof checkEngineMetrics>[0]);
  const out: StartWarning[] = [];
  for (const m of config.metrics) {
    const bad = m.key === undefined ? undefined : engine.get(m.key);
    if (bad !== undefined) out.push({ spec: m, message: bad });
    const state = metricState(m, version);
    if (state === 'hidden' && m.hidden !== true)
      out.push({
        spec: m,
        message: `metric ${m.name} ${deprecationNotice(m.deprecated!)} is hidden at version ${version}: not exposed, logged or sent; --show-hidden-metrics-for-version with the previous minor version shows it`,
      });
    else if (state === 'hidden')
      out.push({ spec: m, message: `metric ${m.name} is hidden (hidden: true): not exposed, logged or sent` });
    else if (state === 'deprecated')
      out.push({ spec: m, message: `metric ${m.name} is deprecated ${deprecationNotice(m.deprecated!)}` });
  }
  return out;
}

/** `FILE:LINE:COL: warning: message`, as the loader's problems print. */
export function formatWarning(file: string, w: StartWarning): string {
  const at = w.spec.pos === null ? '' : `${w.spec.pos.line}:${w.spec.pos.col}:`;
  return `${file}:${at} warning: ${w.message}`;
}
