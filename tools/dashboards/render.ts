/**
 * The three dashboards of a metrics config, as the files `tsserve metrics dashboard` writes
 * (`tools/grafana/*.json` are these, committed): pretty JSON with a final newline.
 */
import type { MetricsConfig } from '../../schema/types.js';
import { Families } from './families.js';
import { generationDashboard } from './generation.js';
import { renderDashboard } from './grafana.js';
import { pipelinesDashboard } from './pipelines.js';
import { servingDashboard } from './serving.js';

/** One generated file: its name and its text. */
export interface GeneratedFile {
  readonly file: string;
  readonly text: string;
}

/** `tsserve-serving.json`, `tsserve-generation.json`, `tsserve-pipelines.json`, in that order. */
export function renderDashboards(config: MetricsConfig): GeneratedFile[] {
  const families = new Families(config);
  return [servingDashboard(families), generationDashboard(families), pipelinesDashboard(families)].map((d) => ({
    file: `${d.uid}.json`,
    text: JSON.stringify(renderDashboard(d), null, 2) + '\n',
  }));
}
