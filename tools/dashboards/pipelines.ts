/**
 * `tsserve-pipelines`: every pipeline family (vLLM-Omni's: `omni_` keys, or labelled by stage,
 * replica or transfer hop) with panels by type. A metrics.yaml without them gives a dashboard
 * holding one text panel that says so.
 */
import { DashboardBuilder } from './builder.js';
import type { Families } from './families.js';
import type { DashboardSpec } from './grafana.js';
import { genericPanels } from './panels.js';

/** The pipelines dashboard of a config's families. */
export function pipelinesDashboard(families: Families): DashboardSpec {
  const b = new DashboardBuilder(families, ['instance', 'model_name', 'stage', 'replica']);
  const specs = families.unclaimed('pipelines');
  b.uses(specs);
  if (specs.length === 0) {
    b.section('Pipelines', [
      {
        type: 'text',
        title: 'No pipeline metrics declared',
        description: '',
        queries: [],
        width: 24,
        content:
          'metrics.yaml declares no pipeline families (names starting `ts_omni_`, or labelled `stage` / `replica`). Declare them and regenerate with `npm run dashboards`.',
      },
    ]);
  } else {
    const whole = specs.filter((s) => !s.dimensions.some((d) => d === 'stage' || d === 'from_stage'));
    const staged = specs.filter((s) => s.dimensions.includes('stage'));
    const hops = specs.filter((s) => s.dimensions.includes('from_stage'));
    b.section(
      'Pipeline requests',
      whole.flatMap((s) => genericPanels(s, b.vars)),
    );
    b.section(
      'Stages',
      staged.flatMap((s) => genericPanels(s, b.vars)),
    );
    b.section(
      'Transfers between stages',
      hops.flatMap((s) => genericPanels(s, b.vars)),
    );
  }
  return b.build(
    'tsserve-pipelines',
    'tsserve / pipelines',
    "Multi-stage pipeline metrics (vLLM-Omni's families): whole-pipeline requests, per-stage and per-replica metrics, transfers between stages. Generated from metrics.yaml by `tsserve metrics dashboard`.",
  );
}
