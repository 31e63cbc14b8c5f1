/**
 * The otlp sink end to end: the real server with `--metrics-mode prometheus,otlp`, the real
 * OpenTelemetry SDK exporting OTLP/HTTP protobuf to a receiver that decodes it with
 * OpenTelemetry's own protobuf definitions; after known traffic, what OTLP carries equals the
 * Prometheus exposition exactly, for a counter, a gauge and a histogram, and a collector that
 * fails is counted in tsserve_sink_errors_total{sink="otlp"}.
 */
import { expect } from 'chai';
import { generateStore, mlpInput, post, scrape, startTsserve } from './harness.js';
import type { Tsserve } from './harness.js';
import { attrs, startOtlpReceiver } from './otlp-receiver.js';
import type { KeyValue, OtlpReceiver } from './otlp-receiver.js';
import { until } from '../support/until.js';

/** Exposition samples by series text (`name{labels}`), with each family's type. */
function exposition(text: string): { samples: Map<string, number>; types: Map<string, string> } {
  const types = new Map<string, string>();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t !== null) types.set(t[1]!, t[2]!);
    if (line.startsWith('#') || line === '') continue;
    const sp = line.lastIndexOf(' ');
    samples.set(line.slice(0, sp), Number(line.slice(sp + 1)));
  }
  return { samples, types };
}

interface NumberPoint {
  attributes: KeyValue[];
  asDouble?: number;
}
interface HistogramPoint {
  attributes: KeyValue[];
  bucketCounts: string[];
  explicitBounds: number[];
  sum: number;
  count: string;
}
interface OtlpMetricJson {
  name: string;
  unit: string;
  description: string;
  sum?: { dataPoints: NumberPoint[]; aggregationTemporality: string; isMonotonic: boolean };
  gauge?: { dataPoints: NumberPoint[] };
  histogram?: { dataPoints: HistogramPoint[]; aggregationTemporality: string };
}
interface MetricsRequest {
  resourceMetrics: Array<{
    resource: { attributes: KeyValue[] };
    scopeMetrics: Array<{ scope: { name: string }; metrics: OtlpMetricJson[] }>;
  }>;
}

const labels = (a: KeyValue[], first = ''): string => {
  const pairs = Object.entries(attrs(a)).map(([k, v]) => `${k}="${String(v)}"`);
  const all = first === '' ? pairs : [first, ...pairs];
  return all.length === 0 ? '' : `{${all.join(',')}}`;
};
const le = (b: number): string => (b === Infinity ? '+Inf' : String(b));

/** One export's metrics as exposition series text → value (counters `_total`, histograms cumulative). */
function asExposition(req: MetricsRequest): Map<string, number> {
  const out = new Map<string, number>();
  for (const rm of req.resourceMetrics)
    for (const sm of rm.scopeMetrics)
      for (const m of sm.metrics) {
        for (const p of m.sum?.dataPoints ?? []) out.set(`${m.name}_total${labels(p.attributes)}`, p.asDouble ?? 0);
        for (const p of m.gauge?.dataPoints ?? []) out.set(`${m.name}${labels(p.attributes)}`, p.asDouble ?? 0);
        for (const p of m.histogram?.dataPoints ?? []) {
          let acc = 0;
          const bounds = [...p.explicitBounds, Infinity];
          bounds.forEach((b, i) => {
            acc += Number(p.bucketCounts[i] ?? 0);
            out.set(`${m.name}_bucket${labels(p.attributes, `le="${le(b)}"`)}`, acc);
          });
          out.set(`${m.name}_sum${labels(p.attributes)}`, p.sum);
          out.set(`${m.name}_count${labels(p.attributes)}`, Number(p.count));
        }
      }
  return out;
}

const only = (m: Map<string, number>, family: string): Record<string, number> =>
  Object.fromEntries(
    [...m].filter(
      ([k]) =>
        k === family || k.startsWith(family + '{') || /^(.+)_(total|bucket|sum|count)(\{|$)/.exec(k)?.[1] === family,
    ),
  );

describe('the otlp sink (real server, OpenTelemetry SDK exporter, protobuf receiver)', function () {
  this.timeout(120_000);
  let receiver: OtlpReceiver;
  let server: Tsserve;

  before(async () => {
    receiver = await startOtlpReceiver();
    server = await startTsserve({
      store: generateStore(['mlp']),
      args: [
        '--models',
        'mlp=mlp',
        '--metrics-mode',
        'prometheus,otlp',
        '--otlp-metrics-endpoint',
        `${receiver.url}/v1/metrics`,
        '--disable-system-metrics',
      ],
      env: { OTEL_METRIC_EXPORT_INTERVAL: '250', OTEL_SERVICE_NAME: 'tsserve-otlp-test' },
    });
  });

  after(async () => {
    server?.kill();
    await receiver?.close();
  });

  it('should export what /metrics shows, exactly, for a counter, a gauge and a histogram after 7 predictions', async () => {
    for (let i = 0; i < 7; i++)
      expect((await post(`${server.inference}/predictions/mlp`, mlpInput(i))).status).to.equal(200);
    // Traffic has stopped: take the exposition, then the first export made after it.
    const text = await scrape(server);
    const seen = receiver.metrics.length;
    const req = (await until(() => receiver.metrics[seen + 1] as MetricsRequest | undefined, {
      message: 'two more OTLP exports after the scrape',
    })) as MetricsRequest;
    const prom = exposition(text);
    const otlp = asExposition(req);
    expect(only(otlp, 'ts_inference_requests')).to.deep.equal(only(prom.samples, 'ts_inference_requests'));
    expect(Object.values(only(otlp, 'ts_inference_requests'))).to.deep.equal([7]);
    expect(only(otlp, 'QueueTime')).to.deep.equal(only(prom.samples, 'QueueTime'));
    expect(only(otlp, 'http_request_duration_seconds')).to.deep.equal(
      only(prom.samples, 'http_request_duration_seconds'),
    );
  });

  it("should name the service from OTEL_SERVICE_NAME and mark counters cumulative and monotonic, with metrics.yaml's unit as UCUM", () => {
    const req = receiver.metrics[receiver.metrics.length - 1] as MetricsRequest;
    const rm = req.resourceMetrics[0]!;
    expect(attrs(rm.resource.attributes)['service.name']).to.equal('tsserve-otlp-test');
    const all = rm.scopeMetrics.flatMap((s) => s.metrics);
    const c = all.find((m) => m.name === 'ts_inference_requests')!;
    expect({ t: c.sum?.aggregationTemporality, mono: c.sum?.isMonotonic }).to.deep.equal({
      t: 'AGGREGATION_TEMPORALITY_CUMULATIVE',
      mono: true,
    });
    expect(all.find((m) => m.name === 'ts_inference_latency_microseconds')!.unit).to.equal('us');
    expect(all.find((m) => m.name === 'http_request_duration_seconds')!.unit).to.equal('s');
  });

  it('should count every failed export in tsserve_sink_errors_total{sink="otlp"} and go on exporting when the collector is back', async () => {
    const errors = (t: string): number =>
      exposition(t).samples.get(
        [...exposition(t).samples.keys()].find(
          (k) => k.startsWith('tsserve_sink_errors_total{') && k.includes('sink="otlp"'),
        ) ?? '',
      ) ?? 0;
    const before = errors(await scrape(server));
    receiver.status = 503;
    await until(async () => errors(await scrape(server)) >= before + 2, { message: 'two failed exports counted' });
    receiver.status = 200;
    const n = receiver.metrics.length;
    await until(() => receiver.metrics.length > n, { message: 'an export accepted after the collector is back' });
  });
});
