import { expect } from 'chai';
import { otlpMetricsSettings, parseOtelPairs } from '../../../../frontend/metrics/otlp/otlp-settings.js';

describe('otlpMetricsSettings', () => {
  it("should default to OpenTelemetry's endpoint on 127.0.0.1, cumulative, every 60 s", () => {
    expect(otlpMetricsSettings(null, {}, 'tsserve')).to.deep.equal({
      settings: {
        endpoint: 'http://127.0.0.1:4318/v1/metrics',
        temporality: 'cumulative',
        intervalMs: 60000,
        timeoutMs: 30000,
        headers: {},
        resource: { 'service.name': 'tsserve' },
      },
    });
  });

  it('should take the flag over OTEL_EXPORTER_OTLP_METRICS_ENDPOINT over OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/metrics), and the OTEL_* settings', () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'Delta',
      OTEL_METRIC_EXPORT_INTERVAL: '1500',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%20b,x=1',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test,service.name=ignored',
      OTEL_SERVICE_NAME: 'svc',
    };
    const r = otlpMetricsSettings(null, env, 'tsserve');
    expect(r).to.deep.equal({
      settings: {
        endpoint: 'http://collector:4318/v1/metrics',
        temporality: 'delta',
        intervalMs: 1500,
        timeoutMs: 30000,
        headers: { 'api-key': 'a b', x: '1' },
        resource: { 'deployment.environment': 'test', 'service.name': 'svc' },
      },
    });
    const flag = otlpMetricsSettings(
      'http://127.0.0.1:9/m',
      { ...env, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://b/' },
      't',
    );
    expect('settings' in flag && flag.settings.endpoint).to.equal('http://127.0.0.1:9/m');
  });

  it('should list every problem at once, each naming its source, with bounded excerpts', () => {
    expect(
      otlpMetricsSettings(
        'ftp://x',
        {
          OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'lowmemory',
          OTEL_METRIC_EXPORT_INTERVAL: '0',
          OTEL_EXPORTER_OTLP_HEADERS: 'novalue',
        },
        't',
      ),
    ).to.deep.equal({
      problems: [
        '--otlp-metrics-endpoint: "ftp://x" is not an http(s) URL',
        'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "lowmemory" (use cumulative or delta)',
        'OTEL_METRIC_EXPORT_INTERVAL: "0" is not a whole number of ms in 1..86400000',
        'OTEL_EXPORTER_OTLP_HEADERS: "novalue" is not key=value',
      ],
    });
  });

  it('should refuse more than 64 pairs in one variable rather than drop some', () => {
    const many = Array.from({ length: 65 }, (_v, i) => `k${i}=v`).join(',');
    expect(parseOtelPairs('OTEL_RESOURCE_ATTRIBUTES', many)).to.deep.equal({
      problem: 'OTEL_RESOURCE_ATTRIBUTES: 65 entries, at most 64',
    });
  });
});
