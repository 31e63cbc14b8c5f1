/**
 * `tsserve-serving`: TorchServe's catalog (requests, latency, queue, workers), the HTTP
 * metrics, host metrics, custom model metrics by type, the Node.js process and the metrics
 * pipeline's own health (tsserve_* self-metrics).
 */
import { selfMetricSpecs } from '../../schema/config/self-section.js';
import type { MetricSpec } from '../../schema/types.js';
import { DashboardBuilder } from './builder.js';
import type { Families } from './families.js';
import { modelLabel } from './families.js';
import type { DashboardSpec, PanelSpec } from './grafana.js';
import {
  counterPanel,
  describe,
  gaugePanel,
  genericPanels,
  grafanaUnit,
  histogramPanels,
  quantileQueries,
} from './panels.js';
import type { VarName } from './promql.js';
import { legend, rate, selector, sumBy } from './promql.js';

const VARS: readonly VarName[] = ['instance', 'model_name'];

/** Host metrics, in the order the System section shows them. */
const SYSTEM_KEYS: readonly string[] = [
  'CPUUtilization',
  'MemoryUtilization',
  'MemoryUsed',
  'MemoryAvailable',
  'DiskUtilization',
  'DiskUsage',
  'DiskAvailable',
  'GPUUtilization',
  'GPUMemoryUtilization',
  'GPUMemoryUsed',
];

function byModel(spec: MetricSpec): string[] {
  const m = modelLabel(spec);
  return m === null ? ['instance'] : [m];
}

function requests(b: DashboardBuilder): PanelSpec[] {
  const req = b.use('inference_requests_total');
  const lat = b.use('inference_latency_microseconds');
  const queue = b.use('queue_latency_microseconds');
  const out: PanelSpec[] = [];
  if (req !== null) {
    const by = byModel(req);
    out.push({
      type: 'stat',
      title: 'Inference requests (since start)',
      description: describe(req, 'Counter value: requests admitted since each instance started.'),
      queries: [{ expr: sumBy(by, selector(req, VARS)), legend: legend(by), instant: true }],
    });
    out.push({
      type: 'timeseries',
      title: 'Inference requests (per second)',
      description: describe(req),
      unit: 'reqps',
      queries: [{ expr: rate(req, VARS, by), legend: legend(by) }],
    });
    for (const [spec, title] of [
      [lat, 'Mean inference latency'],
      [queue, 'Mean queue latency'],
    ] as const) {
      if (spec === null) continue;
      out.push({
        type: 'timeseries',
        title,
        description: describe(spec, `Divided by the rate of \`${req.name}\`: the mean per request over the interval.`),
        unit: grafanaUnit(spec.unit),
        queries: [{ expr: `${rate(spec, VARS, by)} / ${rate(req, VARS, by)}`, legend: legend(by) }],
      });
    }
  }
  const classes = (['Requests2XX', 'Requests4XX', 'Requests5XX'] as const)
    .map((k) => b.use(k))
    .filter((s): s is MetricSpec => s !== null);
  if (classes.length > 0) {
    out.push({
      type: 'timeseries',
      title: 'Responses by status class (per second)',
      description: classes.map((s) => describe(s)).join(' '),
      unit: 'reqps',
      queries: classes.map((s) => ({ expr: rate(s, VARS, ['instance']), legend: `{{instance}} ${s.name}` })),
    });
  }
  return out;
}

function workers(b: DashboardBuilder): PanelSpec[] {
  const out: PanelSpec[] = [];
  for (const [key, title] of [
    ['QueueTime', 'Queue time of the last request'],
    ['WorkerThreadTime', 'Frontend time of the last batch'],
  ] as const) {
    const s = b.use(key);
    if (s !== null)
      out.push(...(s.type === 'histogram' ? histogramPanels(s, VARS, title) : [gaugePanel(s, VARS, title)]));
  }
  const load = b.use('WorkerLoadTime');
  if (load !== null) {
    if (load.type === 'histogram') {
      out.push(...histogramPanels(load, VARS, 'Worker load time'));
    } else {
      out.push(gaugePanel(load, VARS, 'Worker load time'));
      out.push({
        type: 'timeseries',
        title: 'Workers started',
        description: describe(
          load,
          'Series count: one per worker the instance started (a restarted worker is a new one).',
        ),
        queries: [{ expr: `count by (instance) (${selector(load, VARS)})`, legend: '{{instance}}' }],
      });
    }
  }
  return out;
}

function http(b: DashboardBuilder): PanelSpec[] {
  const out: PanelSpec[] = [];
  const total = b.use('http_requests_total');
  if (total !== null) out.push(counterPanel(total, VARS, 'HTTP responses by route and status'));
  const duration = b.use('http_request_duration_seconds');
  if (duration !== null) {
    out.push({
      type: 'timeseries',
      title: 'HTTP latency by route: p50 / p90 / p99',
      description: describe(duration),
      unit: 's',
      queries: quantileQueries(duration, VARS, ['handler']),
    });
  }
  const highr = b.use('http_request_duration_highr_seconds');
  if (highr !== null) out.push(...histogramPanels(highr, VARS, 'HTTP latency, all routes'));
  for (const [key, title] of [
    ['http_request_size_bytes', 'Mean request body size by route'],
    ['http_response_size_bytes', 'Mean response body size by route'],
  ] as const) {
    const s = b.use(key);
    if (s === null) continue;
    out.push({
      type: 'timeseries',
      title,
      description: describe(s),
      unit: grafanaUnit(s.unit),
      queries: [
        {
          expr: `${sumBy(['handler'], `rate(${selector(s, VARS, 'sum')}[$__rate_interval])`)} / ${sumBy(['handler'], `rate(${selector(s, VARS, 'count')}[$__rate_interval])`)}`,
          legend: '{{handler}}',
        },
      ],
    });
  }
  return out;
}

function processPanels(): PanelSpec[] {
  // prom-client's runtime metrics: not declared in metrics.yaml, so named here. With
  // --api-server-count above 1 each process's series carries its pid: the legend names it, or
  // every line of an instance had the same name.
  const i = '{instance=~"$instance"}';
  const legend = '{{instance}} {{pid}}';
  return [
    {
      type: 'timeseries',
      title: 'Frontend CPU (cores)',
      description: 'CPU seconds per second of the frontend process (process_cpu_seconds_total).',
      unit: 'short',
      queries: [{ expr: `rate(process_cpu_seconds_total${i}[$__rate_interval])`, legend }],
    },
    {
      type: 'timeseries',
      title: 'Frontend resident memory',
      description: 'Resident set size of the frontend process (process_resident_memory_bytes).',
      unit: 'bytes',
      queries: [{ expr: `process_resident_memory_bytes${i}`, legend }],
    },
    {
      type: 'timeseries',
      title: 'Event loop lag p99',
      description:
        'p99 event-loop lag of the frontend process (nodejs_eventloop_lag_p99_seconds): high values delay every request.',
      unit: 's',
      queries: [{ expr: `nodejs_eventloop_lag_p99_seconds${i}`, legend }],
    },
  ];
}

/** The serving dashboard of a config's families. */
export function servingDashboard(families: Families): DashboardSpec {
  const b = new DashboardBuilder(families, VARS);
  b.section('Requests', requests(b));
  b.section('Queue and workers', workers(b));
  b.section('HTTP', http(b));
  b.section(
    'System',
    SYSTEM_KEYS.map((k) => b.use(k))
      .filter((s): s is MetricSpec => s !== null)
      .map((s) => gaugePanel(s, VARS)),
  );
  const custom = families.unclaimed('serving', 'model_metrics');
  b.uses(custom);
  b.section(
    'Model metrics (model_metrics)',
    custom.length > 0
      ? custom.flatMap((s) => genericPanels(s, VARS))
      : [
          {
            type: 'text',
            title: 'No model metrics',
            description: '',
            queries: [],
            width: 24,
            content:
              "metrics.yaml declares no `model_metrics`: declare a handler's metrics there and regenerate (`npm run dashboards`).",
          },
        ],
  );
  const other = families.unclaimed('serving', 'ts_metrics');
  b.uses(other);
  b.section(
    'Other frontend metrics',
    other.flatMap((s) => genericPanels(s, VARS)),
  );
  b.section('Frontend process', processPanels());
  b.uses(selfMetricSpecs());
  b.section(
    'Metrics pipeline (tsserve_* self-metrics)',
    selfMetricSpecs().flatMap((s) => genericPanels(s, VARS)),
  );
  return b.build(
    'tsserve-serving',
    'tsserve / serving',
    "TorchServe's catalog, HTTP, host, custom model metrics and the metrics pipeline of tsserve. Generated from metrics.yaml by `tsserve metrics dashboard`.",
  );
}
