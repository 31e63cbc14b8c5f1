/**
 * Prometheus recording and alerting rules generated from metrics.yaml: every expression names
 * the families the yaml declares (looked up by key, as the dashboards do), so a renamed family
 * renames its rules and a family left out drops them. Thresholds are the constants below.
 */
import { counterFamilyName } from '../../frontend/metrics/exposition/units.js';
import { selfMetricSpecs } from '../../schema/config/self-section.js';
import type { MetricSpec, MetricsConfig } from '../../schema/types.js';
import { unitKind } from '../../schema/config/units.js';
import { Families, modelLabel } from '../dashboards/families.js';
import { selector, sumBy } from '../dashboards/promql.js';

/** A recording rule. */
export interface RecordingRule {
  readonly record: string;
  readonly expr: string;
}

/** An alerting rule with runbook-style annotations. */
export interface AlertingRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: { readonly severity: 'warning' | 'critical' };
  readonly annotations: { readonly summary: string; readonly description: string };
}

/** A rule group. */
export interface RuleGroup {
  readonly name: string;
  readonly rules: ReadonlyArray<RecordingRule | AlertingRule>;
}

/** The window of every recorded rate and quantile. */
export const WINDOW = '5m';

/** Alert thresholds (documented in docs/dashboards.md). */
export const THRESHOLDS = {
  /** Share of HTTP responses that are 5xx. */
  httpErrorRatio: 0.05,
  /** Share of finished sequences with finished_reason="error". */
  generationErrorRatio: 0.05,
  /** Share of the inference latency spent queued before a worker took the request. */
  queueShare: 0.5,
  /** Requests waiting in one engine's scheduler. */
  waitingRequests: 50,
  /** KV cache usage (ratio; 95 when the yaml's unit is percent). */
  kvUsage: 0.95,
  /** Preemptions per second. */
  preemptionsPerSecond: 1,
  /** p99 time to first token, seconds. */
  ttftP99Seconds: 5,
  /** p99 inter-token latency, seconds. */
  itlP99Seconds: 1,
} as const;

/** The latency histograms recorded as p50/p90/p99: key (and aliases). */
const RECORDED_QUANTILES: ReadonlyArray<readonly string[]> = [
  ['time_to_first_token_seconds'],
  ['inter_token_latency_seconds', 'time_per_output_token_seconds'],
  ['e2e_request_latency_seconds'],
  ['request_queue_time_seconds'],
  ['request_prefill_time_seconds'],
  ['request_decode_time_seconds'],
];

const QUANTILES: readonly number[] = [0.5, 0.9, 0.99];

function plain(spec: MetricSpec): string {
  return spec.type === 'counter' ? counterFamilyName(spec.name) : spec.name;
}

function rateOf(spec: MetricSpec, by: readonly string[], extra: readonly string[] = []): string {
  return sumBy(by, `rate(${selector(spec, [], spec.type === 'histogram' ? 'count' : undefined, extra)}[${WINDOW}])`);
}

function self(name: string): MetricSpec {
  const s = selfMetricSpecs().find((m) => m.name === name);
  if (s === undefined) throw new Error(`no self-metric ${name}`);
  return s;
}

function alert(
  name: string,
  expr: string,
  forTime: string,
  severity: 'warning' | 'critical',
  summary: string,
  description: string,
): AlertingRule {
  return { alert: name, expr, for: forTime, labels: { severity }, annotations: { summary, description } };
}

/** Recording rules for serving (TorchServe's catalog and HTTP). */
function servingRecords(f: Families, out: RecordingRule[]): Map<string, string> {
  const names = new Map<string, string>();
  const req = f.get('inference_requests_total');
  if (req !== null) {
    const m = modelLabel(req) ?? 'instance';
    const reqRate = `${m}:${plain(req)}:rate${WINDOW}`;
    out.push({ record: reqRate, expr: rateOf(req, [m]) });
    names.set('requests', reqRate);
    for (const [key, role] of [
      ['inference_latency_microseconds', 'latency'],
      ['queue_latency_microseconds', 'queue'],
    ] as const) {
      const s = f.get(key);
      if (s === null) continue;
      const r = `${m}:${plain(s)}:rate${WINDOW}`;
      out.push({ record: r, expr: rateOf(s, [m]) });
      out.push({ record: `${m}:${plain(s)}:mean${WINDOW}`, expr: `${r} / ${reqRate}` });
      names.set(role, r);
    }
  }
  const http = f.get('http_requests_total');
  if (http !== null && http.dimensions.includes('status')) {
    const r = `instance:${plain(http)}:ratio_5xx_rate${WINDOW}`;
    out.push({ record: r, expr: `${rateOf(http, ['instance'], ['status="5xx"'])} / ${rateOf(http, ['instance'])}` });
    names.set('httpErrors', r);
  }
  const highr = f.get('http_request_duration_highr_seconds');
  if (highr !== null) {
    for (const q of QUANTILES) {
      out.push({
        record: `instance:${highr.name}:p${Math.round(q * 100)}_${WINDOW}`,
        expr: `histogram_quantile(${q}, ${sumBy(['le', 'instance'], `rate(${selector(highr, [], 'bucket')}[${WINDOW}])`)})`,
      });
    }
  }
  return names;
}

/** Recording rules for generation (vLLM's families). */
function generationRecords(f: Families, out: RecordingRule[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const keys of [
    ['prompt_tokens_total', 'prompt_tokens'],
    ['generation_tokens_total', 'generation_tokens'],
  ]) {
    const s = f.get(...keys);
    if (s === null) continue;
    const m = modelLabel(s) ?? 'instance';
    out.push({ record: `${m}:${plain(s)}:rate${WINDOW}`, expr: rateOf(s, [m]) });
  }
  const success = f.get('request_success_total', 'request_success');
  if (success !== null && success.dimensions.includes('finished_reason')) {
    const m = modelLabel(success) ?? 'instance';
    out.push({
      record: `${m}_finished_reason:${plain(success)}:rate${WINDOW}`,
      expr: rateOf(success, [m, 'finished_reason']),
    });
    const r = `${m}:${plain(success)}:ratio_error_rate${WINDOW}`;
    out.push({ record: r, expr: `${rateOf(success, [m], ['finished_reason="error"'])} / ${rateOf(success, [m])}` });
    names.set('generationErrors', r);
  }
  for (const keys of RECORDED_QUANTILES) {
    const s = f.get(...keys);
    if (s === null || s.type !== 'histogram') continue;
    const m = modelLabel(s) ?? 'instance';
    for (const q of QUANTILES) {
      const r = `${m}:${s.name}:p${Math.round(q * 100)}_${WINDOW}`;
      out.push({
        record: r,
        expr: `histogram_quantile(${q}, ${sumBy(['le', m], `rate(${selector(s, [], 'bucket')}[${WINDOW}])`)})`,
      });
      names.set(`${keys[0] as string}:${q}`, r);
    }
  }
  return names;
}

function servingAlerts(rec: ReadonlyMap<string, string>, out: AlertingRule[]): void {
  const errors = rec.get('httpErrors');
  if (errors !== undefined) {
    out.push(
      alert(
        'TsserveHighHTTPErrorRatio',
        `${errors} > ${THRESHOLDS.httpErrorRatio}`,
        '5m',
        'critical',
        'More than {{ $value | humanizePercentage }} of HTTP responses of {{ $labels.instance }} are 5xx',
        `5xx responses are above ${THRESHOLDS.httpErrorRatio * 100}% of all responses for 5 minutes. Look in ts_log.log for the failing requests (worker crashes, model errors, response timeouts are 5xx; queue-full 503s mean the instance is saturated: see TsserveRequestsQueueing). Runbook: check the worker logs of the affected model, restart or scale it through the management API.`,
      ),
    );
  }
  const queue = rec.get('queue');
  const latency = rec.get('latency');
  if (queue !== undefined && latency !== undefined) {
    out.push(
      alert(
        'TsserveRequestsQueueing',
        `${queue} / ${latency} > ${THRESHOLDS.queueShare}`,
        '10m',
        'warning',
        'Requests to {{ $labels.model_name }} spend {{ $value | humanizePercentage }} of their latency queued',
        `For 10 minutes, more than ${THRESHOLDS.queueShare * 100}% of the inference latency was time spent queued before a worker took the request: the model's workers are saturated (its queue is the bottleneck, and 503s follow when it fills). Runbook: add workers (PUT /models/{model}?min_worker=N), raise batchSize, or add instances.`,
      ),
    );
  }
  // Counted by the frontend for each unexpected exit only: a scale-up through the management
  // API or a deploy adds workers without counting (a count of WorkerLoadTime series fired on both).
  const restarts = self('tsserve_worker_restarts_total');
  out.push(
    alert(
      'TsserveWorkersRestarted',
      `${sumBy(['instance', 'model_name'], `increase(${restarts.name}[15m])`)} > 0`,
      '0m',
      'warning',
      '{{ $value | printf "%.0f" }} worker(s) of {{ $labels.model_name }} on {{ $labels.instance }} exited unexpectedly in the last 15 minutes',
      `Workers of this model exited unexpectedly in the last 15 minutes (a crash, a kill, a failed or timed-out load) and were replaced after a backoff; ${restarts.name} counts only such exits, not a scale-up or a deploy. Runbook: look for "worker exited" in ts_log.log and the worker's stderr (out of memory, a handler crash), and for response timeouts killing slow workers.`,
    ),
  );
}

function generationAlerts(f: Families, rec: ReadonlyMap<string, string>, out: AlertingRule[]): void {
  const errors = rec.get('generationErrors');
  if (errors !== undefined) {
    out.push(
      alert(
        'TsserveGenerationErrors',
        `${errors} > ${THRESHOLDS.generationErrorRatio}`,
        '5m',
        'critical',
        '{{ $value | humanizePercentage }} of the sequences of {{ $labels.model_name }} finish with an error',
        `More than ${THRESHOLDS.generationErrorRatio * 100}% of finished sequences had finished_reason="error" for 5 minutes. Runbook: read the engine worker's log in ts_log.log (a failing forward pass, a dead worker); requests of a dead engine fail cleanly and the worker is restarted (see TsserveWorkersRestarted).`,
      ),
    );
  }
  const waiting = f.get('num_requests_waiting');
  if (waiting !== null) {
    const by = ['instance', modelLabel(waiting) ?? 'instance'].filter((v, i, a) => a.indexOf(v) === i);
    out.push(
      alert(
        'TsserveGenerationQueueSaturated',
        `${sumBy(by, waiting.name)} > ${THRESHOLDS.waitingRequests}`,
        '5m',
        'warning',
        '{{ $value }} requests wait for {{ $labels.model_name }} on {{ $labels.instance }}',
        `More than ${THRESHOLDS.waitingRequests} requests have waited in the engine's scheduler for 5 minutes: it admits no more because the running batch or the KV cache is full. This is the signal vLLM's production stack autoscales on. Runbook: add instances (or let the autoscaler do it), cap max_tokens, or give the engine more KV blocks.`,
      ),
    );
  }
  const kv = f.get('kv_cache_usage_ratio', 'kv_cache_usage_perc', 'gpu_cache_usage_perc');
  if (kv !== null) {
    const limit = unitKind(kv.unit) === 'percent' ? THRESHOLDS.kvUsage * 100 : THRESHOLDS.kvUsage;
    const by = ['instance', modelLabel(kv) ?? 'instance'].filter((v, i, a) => a.indexOf(v) === i);
    out.push(
      alert(
        'TsserveKVCacheNearFull',
        `max by (${by.join(', ')}) (${kv.name}) > ${limit}`,
        '5m',
        'warning',
        'KV cache of {{ $labels.model_name }} on {{ $labels.instance }} is {{ $value | humanizePercentage }} full',
        `The KV cache has been more than ${THRESHOLDS.kvUsage * 100}% used for 5 minutes: new sequences wait and running ones get preempted (recomputed later), which multiplies latency. Runbook: check the preemption rate; give the engine more KV blocks (num_blocks), lower max_num_seqs or max_model_len, or add instances.`,
      ),
    );
  }
  const preemptions = f.get('num_preemptions_total', 'num_preemptions');
  if (preemptions !== null) {
    const by = ['instance', modelLabel(preemptions) ?? 'instance'].filter((v, i, a) => a.indexOf(v) === i);
    out.push(
      alert(
        'TsservePreemptions',
        `${rateOf(preemptions, by)} > ${THRESHOLDS.preemptionsPerSecond}`,
        '5m',
        'warning',
        '{{ $labels.model_name }} on {{ $labels.instance }} preempts {{ $value | humanize }} sequences per second',
        `The scheduler has preempted more than ${THRESHOLDS.preemptionsPerSecond} running sequence per second for 5 minutes because the KV cache ran out of blocks; preempted sequences are recomputed, wasting compute. Runbook: as for TsserveKVCacheNearFull.`,
      ),
    );
  }
  for (const [key, name, limit, what] of [
    ['time_to_first_token_seconds', 'TsserveTimeToFirstTokenHigh', THRESHOLDS.ttftP99Seconds, 'time to first token'],
    ['inter_token_latency_seconds', 'TsserveInterTokenLatencyHigh', THRESHOLDS.itlP99Seconds, 'inter-token latency'],
  ] as const) {
    const r = rec.get(`${key}:0.99`);
    if (r === undefined) continue;
    out.push(
      alert(
        name,
        `${r} > ${limit}`,
        '5m',
        'warning',
        `p99 ${what} of {{ $labels.model_name }} is {{ $value | humanizeDuration }}`,
        `The 99th percentile ${what} has been above ${limit} s for 5 minutes. Runbook: look at the queue time and KV usage panels of the generation dashboard: waiting requests (queueing) or preemptions (KV pressure) explain most of it; else the engine is compute-bound, add instances.`,
      ),
    );
  }
}

function pipelineAlerts(out: AlertingRule[]): void {
  const dropped = self('tsserve_datapoints_dropped_total');
  out.push(
    alert(
      'TsserveMetricsDropped',
      `${rateOf(dropped, ['instance', 'reason'])} > 0`,
      '10m',
      'warning',
      '{{ $labels.instance }} drops metric datapoints ({{ $labels.reason }})',
      'Datapoints have been dropped instead of recorded for 10 minutes; the reason label says why (a handler recording an undeclared metric or wrong dimensions, a negative counter increment, NaN...). Metrics of the affected series are incomplete. Runbook: the first drop of each (metric, reason) is logged once in ts_log.log; fix the handler or declare the metric in metrics.yaml.',
    ),
  );
  const sink = self('tsserve_sink_errors_total');
  out.push(
    alert(
      'TsserveMetricsSinkErrors',
      `${rateOf(sink, ['instance', 'sink'])} > 0`,
      '5m',
      'warning',
      'The {{ $labels.sink }} metrics sink of {{ $labels.instance }} is failing',
      "A metrics sink has failed deliveries for 5 minutes (statsd: datagrams not sent, their datapoints lost; tslog: metric lines lost). The other sinks are unaffected. Runbook: check the StatsD agent address and that it runs, or the log directory's disk space and permissions.",
    ),
  );
  const overflow = self('tsserve_series_overflow_total');
  out.push(
    alert(
      'TsserveSeriesOverflow',
      `${sumBy(['instance', 'metric'], `increase(${overflow.name}[15m])`)} > 0`,
      '0m',
      'warning',
      '{{ $labels.metric }} on {{ $labels.instance }} hit its series limit',
      "New series of this metric were folded into its overflow series (label value __overflow__) in the last 15 minutes because it reached limits.max_series_per_metric: a dimension has unbounded values (a request id, a user id). Runbook: remove the unbounded dimension from the handler's metric, or raise the limit in metrics.yaml if the cardinality is expected.",
    ),
  );
}

/** The rule groups of a config: `tsserve.records` then `tsserve.alerts`. */
export function ruleGroups(config: MetricsConfig): RuleGroup[] {
  const f = new Families(config);
  const records: RecordingRule[] = [];
  const serving = servingRecords(f, records);
  const generation = generationRecords(f, records);
  const alerts: AlertingRule[] = [];
  servingAlerts(serving, alerts);
  generationAlerts(f, generation, alerts);
  pipelineAlerts(alerts);
  // With --api-server-count N > 1 every process's series carries its pid, so a restart starts
  // new series and changes() on each saw none; the primary started first, so the instance's
  // minimum is its start time, with or without pid labels.
  const started = 'instance_job:process_start_time_seconds:min';
  records.push({ record: started, expr: 'min by (instance, job) (process_start_time_seconds)' });
  alerts.push(
    alert(
      'TsserveRestarted',
      `changes(${started}[15m]) > 0`,
      '0m',
      'warning',
      'tsserve on {{ $labels.instance }} restarted',
      "The frontend process started again in the last 15 minutes (process_start_time_seconds changed): in-flight requests of a crash were lost, counters restarted from zero (rate() handles that). Runbook: look at the previous run's ts_log.log and the supervisor (systemd, Kubernetes) for the exit reason.",
    ),
  );
  return [
    { name: 'tsserve.records', rules: records },
    { name: 'tsserve.alerts', rules: alerts },
  ];
}
