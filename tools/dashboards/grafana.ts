/**
 * Grafana's classic dashboard JSON model (what Grafana 11/12 export and import), built from
 * plain data: panels are laid out two to a row under collapsible-looking row headers, ids and
 * positions assigned in order, so the output is deterministic and diffable. Typed against
 * Grafana's own schema (`@grafana/schema`, the one file that imports it), so a field Grafana
 * does not know, or a value of the wrong type, fails the build.
 */
import type { Dashboard, DataSourceRef, GridPos, Panel, RowPanel, VariableModel } from '@grafana/schema';

/** Grafana's schemaVersion of the classic model written here (Grafana 12.0). */
export const SCHEMA_VERSION = 41;

/** The datasource every panel and variable uses: the `DS_PROMETHEUS` datasource variable. */
export const DATASOURCE: DataSourceRef = { type: 'prometheus', uid: '${DS_PROMETHEUS}' };

/** One PromQL query of a panel. */
export interface Query {
  readonly expr: string;
  readonly legend: string;
  /** `heatmap` for bucket queries shown as a heatmap; `table`-less time series otherwise. */
  readonly format?: 'heatmap';
  /** An instant query (stat panels showing the current value). */
  readonly instant?: boolean;
}

/** A panel before layout. */
export interface PanelSpec {
  readonly type: 'timeseries' | 'heatmap' | 'stat' | 'text';
  readonly title: string;
  readonly description: string;
  /** Grafana unit id (`s`, `reqps`, `percentunit`, ...). */
  readonly unit?: string;
  readonly queries: readonly Query[];
  /** Markdown of a text panel. */
  readonly content?: string;
  /** Width in grid columns (24 is the full width); 12 by default, 6 for stats. */
  readonly width?: number;
}

/** A titled group of panels. */
export interface Section {
  readonly title: string;
  readonly panels: readonly PanelSpec[];
}

/** A template variable (other than the datasource one). */
export interface Variable {
  readonly name: string;
  /** `label_values(series, label)`. */
  readonly query: string;
}

/** What a dashboard holds, before it becomes Grafana JSON. */
export interface DashboardSpec {
  readonly uid: string;
  readonly title: string;
  readonly description: string;
  readonly variables: readonly Variable[];
  readonly sections: readonly Section[];
}

/** A panel's query as Grafana stores it (`Panel.targets` is open-ended per datasource). */
type Target = Record<string, unknown>;

function target(q: Query, i: number): Target {
  return {
    datasource: DATASOURCE,
    editorMode: 'code',
    expr: q.expr,
    ...(q.format !== undefined ? { format: q.format } : {}),
    ...(q.instant === true ? { instant: true, range: false } : { range: true }),
    legendFormat: q.legend,
    refId: String.fromCharCode(65 + i),
  };
}

function options(p: PanelSpec): Record<string, unknown> {
  if (p.type === 'text') return { mode: 'markdown', content: p.content ?? '' };
  if (p.type === 'stat')
    return {
      reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
      colorMode: 'value',
      graphMode: 'none',
      textMode: 'value_and_name',
    };
  if (p.type === 'heatmap') {
    return {
      calculate: false,
      cellGap: 1,
      color: { mode: 'scheme', scheme: 'Spectral', steps: 64 },
      yAxis: { axisPlacement: 'left', unit: p.unit ?? 'short' },
      rowsFrame: { layout: 'auto' },
      tooltip: { mode: 'single', yHistogram: true },
      legend: { show: true },
    };
  }
  return {
    legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
    tooltip: { mode: 'multi', sort: 'desc' },
  };
}

function panel(p: PanelSpec, id: number, gridPos: GridPos): Panel {
  const base: Panel = { id, type: p.type, title: p.title, description: p.description, gridPos };
  if (p.type === 'text') return { ...base, options: options(p) };
  return {
    ...base,
    datasource: DATASOURCE,
    fieldConfig: { defaults: { unit: p.unit ?? 'short' }, overrides: [] },
    options: options(p),
    targets: p.queries.map(target),
  };
}

/** A multi-select query variable whose current value is All (what Grafana writes for a new one). */
function variable(v: Variable): VariableModel {
  return {
    allValue: '.*',
    current: { selected: true, text: 'All', value: '$__all' },
    datasource: DATASOURCE,
    includeAll: true,
    label: v.name,
    multi: true,
    name: v.name,
    options: [],
    query: { qryType: 1, query: v.query, refId: 'PrometheusVariableQueryEditor-VariableQuery' },
    refresh: 2,
    regex: '',
    sort: 1,
    type: 'query',
  };
}

/** The datasource variable; with no `current`, Grafana selects the default Prometheus datasource. */
const DATASOURCE_VARIABLE: VariableModel = {
  hide: 0,
  includeAll: false,
  label: 'Prometheus',
  multi: false,
  name: 'DS_PROMETHEUS',
  options: [],
  query: 'prometheus',
  refresh: 1,
  regex: '',
  type: 'datasource',
};

/** The dashboard as Grafana JSON (an object ready for JSON.stringify). */
export function renderDashboard(d: DashboardSpec): Dashboard {
  const panels: Array<Panel | RowPanel> = [];
  let id = 1;
  let y = 0;
  for (const s of d.sections) {
    panels.push({
      id: id++,
      type: 'row',
      title: s.title,
      collapsed: false,
      gridPos: { h: 1, w: 24, x: 0, y },
      panels: [],
    });
    y += 1;
    let x = 0;
    let rowHeight = 0;
    let last: PanelSpec['type'] | null = null;
    for (const p of s.panels) {
      const w = p.width ?? (p.type === 'stat' ? 6 : 12);
      const h = p.type === 'stat' ? 4 : p.type === 'text' ? 4 : 8;
      // Stats share a line with stats only, so the taller graphs below them line up.
      if (x + w > 24 || (last !== null && (last === 'stat') !== (p.type === 'stat'))) {
        y += rowHeight;
        x = 0;
        rowHeight = 0;
      }
      panels.push(panel(p, id++, { h, w, x, y }));
      x += w;
      rowHeight = Math.max(rowHeight, h);
      last = p.type;
    }
    y += rowHeight;
  }
  return {
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: 'grafana', uid: '-- Grafana --' },
          enable: true,
          hide: true,
          iconColor: 'rgba(0, 211, 255, 1)',
          name: 'Annotations & Alerts',
          type: 'dashboard',
        },
      ],
    },
    description: d.description,
    editable: true,
    fiscalYearStartMonth: 0,
    graphTooltip: 1,
    id: null,
    links: [],
    panels,
    refresh: '30s',
    schemaVersion: SCHEMA_VERSION,
    tags: ['tsserve'],
    templating: { list: [DATASOURCE_VARIABLE, ...d.variables.map(variable)] },
    time: { from: 'now-1h', to: 'now' },
    timepicker: {},
    timezone: 'browser',
    title: d.title,
    uid: d.uid,
    version: 1,
  };
}

/** Every PromQL expression of a rendered dashboard's panels, with the panel title (for tests). */
export function dashboardQueries(dashboard: unknown): Array<{ readonly panel: string; readonly expr: string }> {
  const out: Array<{ panel: string; expr: string }> = [];
  const panels = (dashboard as { panels?: Array<{ title?: string; targets?: Array<{ expr?: string }> }> }).panels ?? [];
  for (const p of panels)
    for (const t of p.targets ?? []) if (typeof t.expr === 'string') out.push({ panel: p.title ?? '', expr: t.expr });
  return out;
}
