/**
 * The declared families a dashboard or a rule file is built from, looked up by a stable key
 * (never by a hard-coded name), so a metrics.yaml that renames a family (vLLM's `vllm:` names,
 * say) changes every query, and a family the yaml leaves out takes its panels and rules with it.
 */
import type { MetricSpec, MetricsConfig } from '../../schema/types.js';

/** Name prefixes that are not part of a family's key (ours and vLLM's). */
const NAME_PREFIXES: readonly string[] = ['ts_', 'vllm:'];

/** Suffixes a key is compared without: `_total`, then a unit (`kv_cache_usage_ratio` and `_perc` are one family). */
const KEY_SUFFIXES: readonly RegExp[] = [/_total$/, /_(seconds|ratio|perc)$/];

/** Label names that carry the model (ours and vLLM's `model_name`, TorchServe's `ModelName`). */
const MODEL_LABELS: readonly string[] = ['model_name', 'ModelName'];

/** Labels of a pipeline stage (vLLM-Omni): a family with one of them belongs to the pipelines dashboard. */
export const STAGE_LABELS: readonly string[] = ['stage', 'replica', 'from_stage', 'to_stage'];

/**
 * A key in the form lookups compare: without a `namespace.` (`llm.`), without the `ts_` /
 * `vllm:` prefix, without `_total` and a unit suffix. `llm.time_to_first_token`,
 * `ts_time_to_first_token_seconds` and `vllm:time_to_first_token_seconds` are all
 * `time_to_first_token`.
 */
export function normalizeKey(raw: string): string {
  let k = raw.replace(/^[a-z0-9_]+\./, '');
  const prefix = NAME_PREFIXES.find((p) => k.startsWith(p));
  if (prefix !== undefined) k = k.slice(prefix.length);
  for (const re of KEY_SUFFIXES) k = k.replace(re, '');
  return k;
}

/** The yaml's `key:` of a family, when it declares one. */
function declaredKey(spec: MetricSpec): string | null {
  const k = (spec as MetricSpec & { readonly key?: unknown }).key;
  return typeof k === 'string' && k !== '' ? k : null;
}

/**
 * A family's stable key, normalized: from the yaml's `key:` when it declares one (the key the
 * server binds the family by), else from its name.
 */
export function familyKey(spec: MetricSpec): string {
  return normalizeKey(declaredKey(spec) ?? spec.name);
}

/** The label carrying the model name, or null. */
export function modelLabel(spec: MetricSpec): string | null {
  return spec.dimensions.find((d) => MODEL_LABELS.includes(d)) ?? null;
}

/** Which dashboard a family belongs to: pipelines (`omni` names or keys, stage labels), generation (`engine`), serving. */
export type FamilyGroup = 'serving' | 'generation' | 'pipelines';

/** The group of one family. */
export function familyGroup(spec: MetricSpec): FamilyGroup {
  const omni = /(^|[._:])omni[._]/;
  if (
    omni.test(spec.name) ||
    omni.test(declaredKey(spec) ?? '') ||
    spec.dimensions.some((d) => STAGE_LABELS.includes(d))
  )
    return 'pipelines';
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

  /** The first declared family among `keys` (a key and its aliases, compared normalized), marked as used; null when none is. */
  get(...keys: readonly string[]): MetricSpec | null {
    for (const k of keys) {
      const m = this.byKey.get(normalizeKey(k));
      if (m !== undefined) {
        this.claimed.add(m.name);
        return m;
      }
    }
    return null;
  }

  /** Families of `group` (of `section`, when given) that no `get` has taken yet, in yaml order. */
  unclaimed(group: FamilyGroup, section?: MetricSpec['section']): MetricSpec[] {
    return this.all.filter(
      (m) => (section === undefined || m.section === section) && familyGroup(m) === group && !this.claimed.has(m.name),
    );
  }

  /** Marks `spec` as shown (a generic panel took it). */
  claim(spec: MetricSpec): void {
    this.claimed.add(spec.name);
  }
}
