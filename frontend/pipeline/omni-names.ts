/**
 * The pipeline families found under either name: ours (`ts_omni_*`, metrics.yaml) or
 * vLLM-Omni's (`vllm_omni:*`, the vLLM profile), so the code binds one name and the yaml decides
 * what the exposition calls it (VLLM_OMNI_NAMES in schema/metric-catalog.ts).
 */
import { VLLM_OMNI_NAMES } from '../../schema/metric-catalog.js';
import type { MetricsPort } from '../models/metrics-port.js';

/** `metrics` whose `get` of a pipeline family falls back to vLLM-Omni's name of it. */
export function withOmniNames(metrics: Pick<MetricsPort, 'get'>): Pick<MetricsPort, 'get'> {
  const omni = VLLM_OMNI_NAMES as Readonly<Record<string, string>>;
  return {
    get: (name) => {
      const m = metrics.get(name);
      const alt = omni[name];
      return m !== null || alt === undefined ? m : metrics.get(alt);
    },
  };
}
