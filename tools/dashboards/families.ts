/**
 * The declared families a dashboard or a rule file is built from, looked up by a stable key
 * (never by a hard-coded name), so a metrics.yaml that renames a family (vLLM's `vllm:` names,
 * say) changes every query, and a family the yaml leaves out takes its panels and rules with it.
 */
import type { MetricSpec, MetricsConfig } from '../../schema/types.js';

/** Name prefixes that are not part of a family's key (ours and vLLM's). */
const KEY_PREFIXES: readonly string[] = ['ts_', 'vllm:'];

/** Label names that carry the model (ours and vLLM's `model_name`, TorchServe's `ModelName`). */
const MODEL_LABELS: readonly string[] = ['model_name', 'ModelName'];

/** Labels of a pipeline stage (vLLM-Omni): a family with one of them belongs to the pipelines dashboard. */
export const STAGE_LABELS: readonly string[] = ['stage', 'replica', 'from_stage', 'to_stage'];

/**
 * A family's stable key: the yaml's `key:` when it declares one, else its name without the
 * `ts_` / `vllm:` prefix (`ts_time_to_first_token_seconds` and
 * `vllm:time_to_first_token_seconds` are both `time_to_first_token_seconds`).
 */
export function familyKey(spec: MetricSpec): string {
  const declared = (spec as MetricSpec & { readonly key?: unknown }).key;
  const raw = typeof declared === 'string' && declared !== '' ? declared : spec.name;
  const prefix = KEY_PREFIXES.find((p) => raw.startsWith(p));
  return prefix === undefined ? raw : raw.slice(prefix.length);
}

/** The label carrying the model name, or null. */
export function modelLabel(spec: MetricSpec): string | null {
  return spec.dimensions.find((d) => MODEL_LABELS.includes(d)) ?? null;
}

/** Which dashboard a family belongs to: pipelines (stage labels or `omni_` keys), generation (`engine`), serving. */
export type FamilyGroup = 'serving' | 'generation' | 'pipelines';

/** The group of one family. */
export function familyGroup(spec: MetricSpec): FamilyGroup {
  if (familyKey(spec).startsWith('omni_') || spec.dimensions.some((d) => STAGE_LABELS.includes(d))) return 'pipelines';
  if (spec.dimensions.includes('engine')) return 'generation';
  return 'serving';
}

/** The exposed (not hidden) families of a config, by key; looked up by key or aliases. */
export class Families {
  private readonly byKey = new Map<string, MetricSpec>();
  private readonly claimed = new Set<string>();
  /** Every exposed family, in yaml order. */
  readonly all: readonly MetricSpec[];

  constructor(config: MetricsConfig) {
    this.all = config.metrics.filter((m) => m.hidden !== true);
    for (const m of this.all) if (!this.byKey.has(familyKey(m))) this.byKey.set(familyKey(m), m);
  }

  /** The first declared family among `keys` (a key and its aliases), marked as used; null when none is. */
  get(...keys: readonly string[]): MetricSpec | null {
    for (const k of keys) {
      const m = this.byKey.get(k);
      if (m !== undefined) {
        this.claimed.add(m.name);
        return m;
      }
    }
    return null;
  }

  /** Families of `group` (of `section`, when given) that no `get` has taken yet, in yaml order. */
  unclaimed(group: FamilyGroup, section?: MetricSpec['section']): MetricSpec[] {
    return this.all.filter((m) => (section === undefined || m.section === section) && familyGroup(m) === group && !this.claimed.has(m.name));
  }

  /** Marks `spec` as shown (a generic panel took it). */
  claim(spec: MetricSpec): void {
    this.claimed.add(spec.name);
  }
}
