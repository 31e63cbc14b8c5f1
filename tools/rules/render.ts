/** The text of tools/prometheus/tsserve.rules.yml: the rule groups of a config as Prometheus rule-file YAML. */
import type { MetricsConfig } from '../../schema/types.js';
import type { YamlValue } from './yaml.js';
import { toYaml } from './yaml.js';
import { ruleGroups } from './rules.js';

const HEADER: readonly string[] = [
  'Prometheus recording and alerting rules for tsserve, generated from metrics.yaml by',
  '`tsserve metrics rules` (`npm run dashboards` rewrites this file; a test compares them).',
  'Load it with `rule_files:` in prometheus.yml, or through the PrometheusRule of deploy/kubernetes.',
  'What each rule means and why: docs/dashboards.md.',
];

/** The rule file's text. */
export function renderRules(config: MetricsConfig): string {
  const groups = ruleGroups(config);
  return toYaml(
    { groups: groups.map((g) => ({ name: g.name, rules: g.rules as unknown as readonly YamlValue[] })) },
    HEADER,
  );
}
