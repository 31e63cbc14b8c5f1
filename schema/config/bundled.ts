/** The metrics configurations shipped at the repo root, where the compiled code finds them. */
import * as path from 'path';

/** Shipped metrics configurations by `--metrics-profile` name, as files at the repo root. */
export const METRICS_PROFILES: Readonly<Record<string, string>> = { vllm: 'metrics-vllm.yaml' };

/** The file of a shipped profile, or null for an unknown name. */
export function profileConfigPath(name: string): string | null {
  const f = METRICS_PROFILES[name];
  return f === undefined ? null : path.resolve(import.meta.dirname, '..', '..', '..', f);
}

/** The repo's root metrics.yaml (this file runs from dist/schema/config). */
export function defaultMetricsConfigPath(): string {
  return path.resolve(import.meta.dirname, '..', '..', '..', 'metrics.yaml');
}
