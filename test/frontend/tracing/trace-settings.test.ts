import { expect } from 'chai';
import { otlpTracesSettings } from '../../../frontend/tracing/trace-settings.js';

describe('otlpTracesSettings', () => {
  it('should leave tracing off with no flag, no traces endpoint and no OTEL_TRACES_EXPORTER, even with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
    expect(otlpTracesSettings(null, {}, 'tsserve')).to.deep.equal({ settings: null });
    expect(otlpTracesSettings(null, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, 'tsserve')).to.deep.equal({
      settings: null,
    });
  });

  it("should take the flag as is, with OpenTelemetry's defaults for the sampler and the batch span processor", () => {
    expect(otlpTracesSettings('http://127.0.0.1:4318/v1/traces', {}, 'tsserve')).to.deep.equal({
      settings: {
        endpoint: 'http://127.0.0.1:4318/v1/traces',
        headers: {},
        resource: { 'service.name': 'tsserve' },
        sampler: 'parentbased_always_on',
        ratio: 1,
        maxQueueSize: 2048,
        maxExportBatchSize: 512,
        scheduledDelayMs: 5000,
        exportTimeoutMs: 10000,
      },
    });
  });

  it('should read the OTEL_* environment: endpoint, sampler and ratio, headers, processor bounds, service name', () => {
    const r = otlpTracesSettings(
      null,
      {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-token=a%20b',
        OTEL_BSP_MAX_QUEUE_SIZE: '100',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '500',
        OTEL_BSP_SCHEDULE_DELAY: '250',
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '2000',
        OTEL_SERVICE_NAME: 'svc',
      },
      'tsserve',
    );
    expect(r).to.deep.equal({
      settings: {
        endpoint: 'http://collector:4318/v1/traces',
        headers: { 'x-token': 'a b' },
        resource: { 'service.name': 'svc' },
        sampler: 'parentbased_traceidratio',
        ratio: 0.25,
        maxQueueSize: 100,
        // Never above the queue: the SDK would shrink it with a warning.
        maxExportBatchSize: 100,
        scheduledDelayMs: 250,
        exportTimeoutMs: 2000,
      },
    });
    const env = otlpTracesSettings(null, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://t.example/v1/traces' }, 'x');
    expect('settings' in env && env.settings?.endpoint).to.equal('https://t.example/v1/traces');
  });

  it('should name every bad value instead of starting, the flag and each variable', () => {
    expect(
      otlpTracesSettings(
        'ftp://x',
        {
          OTEL_TRACES_SAMPLER: 'sometimes',
          OTEL_BSP_MAX_QUEUE_SIZE: '0',
          OTEL_EXPORTER_OTLP_HEADERS: 'novalue',
        },
        'tsserve',
      ),
    ).to.deep.equal({
      problems: [
        '--otlp-traces-endpoint: "ftp://x" is not an http(s) URL',
        'OTEL_TRACES_SAMPLER: "sometimes" (use always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio)',
        'OTEL_EXPORTER_OTLP_HEADERS: "novalue" is not key=value',
        'OTEL_BSP_MAX_QUEUE_SIZE: "0" is not a whole number in 1..1000000',
      ],
    });
    expect(
      otlpTracesSettings(
        'http://h/v1/traces',
        { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' },
        't',
      ),
    ).to.deep.equal({ problems: ['OTEL_TRACES_SAMPLER_ARG: "1.5" is not a ratio in [0, 1]'] });
  });
});
