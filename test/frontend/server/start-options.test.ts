import { expect } from 'chai';
import { parseAddress } from '../../../frontend/http/address.js';
import { parseStartOptions } from '../../../frontend/server/start-options.js';
import { metricNamesFilter } from '../../../frontend/http/metrics-app.js';

describe('parseStartOptions', () => {
  it('should take each option from its flag, then env TS_<NAME>, then the default', () => {
    const r = parseStartOptions(['--metrics-mode', 'statsd', '--models', 'a=x', 'b=y', '--disable-system-metrics'], {
      TS_METRICS_MODE: 'tslog',
      TS_LOG_DIR: '/tmp/l',
      TS_METRIC_TIME_INTERVAL: '5',
    });
    expect(r).to.deep.equal({
      ok: true,
      options: {
        help: false,
        inferenceAddress: 'http://127.0.0.1:8080',
        managementAddress: 'http://127.0.0.1:8081',
        metricsAddress: 'http://127.0.0.1:8082',
        modelStore: './model-store',
        modelStoreIsDefault: true,
        models: ['a=x', 'b=y'],
        metricsConfig: null,
        metricsProfile: null,
        metricsMode: 'statsd',
        statsdAddress: null,
        otlpMetricsEndpoint: null,
        otlpTracesEndpoint: null,
        logDir: '/tmp/l',
        logLevel: 'info',
        metricTimeInterval: 5,
        disableSystemMetrics: true,
        enableTokenAuth: false,
        maxRequestSize: 1048576,
        maxJsonDepth: 32,
        maxJsonElements: 262144,
        requestTimeout: 30000,
        requestIdleTimeout: 10000,
        headerTimeout: 30000,
        apiServerCount: 1,
        jobQueueSize: 0,
        logStatsInterval: 10,
        disableLogStats: false,
        enableMfuMetrics: false,
        maxWorkers: 0,
        modelLoadTimeout: 120,
        shutdownTimeout: 25,
        chatTemplate: null,
        showHiddenMetricsForVersion: null,
      },
    });
  });

  it('should read --max-workers, --model-load-timeout and --shutdown-timeout from flags and TS_ env', () => {
    const r = parseStartOptions(['--max-workers', '6', '--shutdown-timeout=3'], {
      TS_MODEL_LOAD_TIMEOUT: '9',
      TS_SHUTDOWN_TIMEOUT: '7',
    });
    expect(r.ok && [r.options.maxWorkers, r.options.modelLoadTimeout, r.options.shutdownTimeout]).to.deep.equal([
      6, 9, 3,
    ]);
    expect(parseStartOptions(['--max-workers', '-1'], {})).to.deep.equal({
      ok: false,
      problems: ["--max-workers: expected a non-negative integer, got '-1'"],
    });
  });

  it('should refuse a timer flag past a day (past 2^31-1 ms a timer fires after 1 ms)', () => {
    expect(
      parseStartOptions(
        ['--model-load-timeout', '3000000', '--request-timeout', '86400001', '--shutdown-timeout=86400'],
        { TS_METRIC_TIME_INTERVAL: '86401' },
      ),
    ).to.deep.equal({
      ok: false,
      problems: [
        '--metric-time-interval: at most 86400 s (one day), got 86401',
        '--model-load-timeout: at most 86400 s (one day), got 3000000',
        '--request-timeout: at most 86400000 ms (one day), got 86400001',
      ],
    });
  });

  it('should refuse an empty, hexadecimal or exponent integer instead of reading it as 0 or another number (--shutdown-timeout= meant no limit)', () => {
    expect(
      parseStartOptions(
        [
          '--shutdown-timeout=',
          '--max-workers',
          '1e0',
          '--max-request-size',
          '0x400',
          '--job-queue-size',
          '5.0',
          '--max-json-depth',
          '99999999999999999999',
        ],
        { TS_MODEL_LOAD_TIMEOUT: ' ' },
      ),
    ).to.deep.equal({
      ok: false,
      problems: [
        "--max-request-size: expected a non-negative integer, got '0x400'",
        "--max-json-depth: expected a non-negative integer, got '99999999999999999999'",
        "--job-queue-size: expected a non-negative integer, got '5.0'",
        "--max-workers: expected a non-negative integer, got '1e0'",
        "--model-load-timeout: expected a non-negative integer, got ' '",
        "--shutdown-timeout: expected a non-negative integer, got ''",
      ],
    });
    const r = parseStartOptions(['--max-workers', ' 3 ', '--shutdown-timeout=0'], { TS_MAX_REQUEST_SIZE: '2048' });
    expect(r.ok && [r.options.maxWorkers, r.options.shutdownTimeout, r.options.maxRequestSize]).to.deep.equal([
      3, 0, 2048,
    ]);
  });

  it('should refuse 0 where it has no meaning, every such flag at once: a body deadline, the body size, the JSON bounds (regression: --max-json-depth 0 started, then 400ed every prediction), the sampling interval and the header timeout', () => {
    expect(
      parseStartOptions(
        [
          '--request-timeout',
          '0',
          '--request-idle-timeout=0',
          '--max-request-size',
          '0',
          '--header-timeout',
          '0',
          '--max-json-depth',
          '0',
        ],
        { TS_METRIC_TIME_INTERVAL: '0', TS_MAX_JSON_ELEMENTS: '0' },
      ),
    ).to.deep.equal({
      ok: false,
      problems: [
        '--metric-time-interval: at least 1 s, got 0',
        '--max-request-size: at least 1 byte, got 0',
        '--max-json-depth: at least 1 level, got 0',
        '--max-json-elements: at least 1 element, got 0',
        '--request-timeout: at least 1 ms, got 0',
        '--header-timeout: at least 1 ms, got 0',
        '--request-idle-timeout: at least 1 ms, got 0',
      ],
    });
    const r = parseStartOptions(
      [
        '--shutdown-timeout',
        '0',
        '--model-load-timeout',
        '0',
        '--max-workers',
        '0',
        '--job-queue-size',
        '0',
        '--log-stats-interval',
        '0',
        '--metric-time-interval',
        '1',
        '--max-json-depth',
        '1',
        '--max-json-elements',
        '1',
      ],
      {},
    );
    expect(
      r.ok && [
        r.options.shutdownTimeout,
        r.options.modelLoadTimeout,
        r.options.maxWorkers,
        r.options.jobQueueSize,
        r.options.logStatsInterval,
        r.options.metricTimeInterval,
        r.options.maxJsonDepth,
        r.options.maxJsonElements,
      ],
    ).to.deep.equal([0, 0, 0, 0, 0, 1, 1, 1]);
  });

  it('should refuse an empty value of a path or list flag rather than take the default or the current directory (--log-dir= logged into the cwd, --models "" loaded every model)', () => {
    expect(
      parseStartOptions(['--log-dir=', '--models', '', '--model-store', ' ', '--metrics-mode='], {
        TS_LOG_DIR: '/env/logs',
      }),
    ).to.deep.equal({
      ok: false,
      problems: [
        '--model-store: empty value (leave the flag out for the default)',
        '--models: empty value (leave the flag out for the default)',
        '--metrics-mode: empty value (leave the flag out for the default)',
        '--log-dir: empty value (leave the flag out for the default)',
      ],
    });
    const r = parseStartOptions([], { TS_LOG_DIR: '', TS_MODELS: '' });
    expect(r.ok && [r.options.logDir, r.options.models]).to.deep.equal(['./logs', ['all']]);
  });

  it('should report unknown options and bad values together', () => {
    expect(
      parseStartOptions(['--nope', '--metric-time-interval=x', 'stray'], { TS_ENABLE_TOKEN_AUTH: 'maybe' }),
    ).to.deep.equal({
      ok: false,
      problems: [
        "unknown option '--nope' (see tsserve start --help)",
        "unexpected argument 'stray'",
        "--metric-time-interval: expected a non-negative integer, got 'x'",
        "--enable-token-auth: expected true or false, got 'maybe'",
      ],
    });
  });

  it('should prefer the flag to env TS_<NAME> and env to the default', () => {
    const env = { TS_METRICS_MODE: 'statsd', TS_MODEL_STORE: '/env/store', TS_LOG_LEVEL: 'debug' };
    const fromFlag = parseStartOptions(['--metrics-mode', 'prometheus', '--log-level', 'warn'], env);
    expect(
      fromFlag.ok && [
        fromFlag.options.metricsMode,
        fromFlag.options.modelStore,
        fromFlag.options.modelStoreIsDefault,
        fromFlag.options.logLevel,
      ],
    ).to.deep.equal(['prometheus', '/env/store', false, 'warn']);
    const fromDefault = parseStartOptions([], {});
    expect(
      fromDefault.ok && [fromDefault.options.metricsMode, fromDefault.options.modelStore, fromDefault.options.logLevel],
    ).to.deep.equal([null, './model-store', 'info']);
  });

  it('should accept --models as a comma list, space-separated and repeated, like TS_MODELS', () => {
    const models = (argv: string[], env: NodeJS.ProcessEnv = {}): readonly string[] | null => {
      const r = parseStartOptions(argv, env);
      return r.ok ? r.options.models : null;
    };
    expect(models(['--models', 'a=a,b=b'])).to.deep.equal(['a=a', 'b=b']);
    expect(models(['--models', 'a=a', 'b=b'])).to.deep.equal(['a=a', 'b=b']);
    expect(models(['--models', 'a=a', '--models', 'b=b'])).to.deep.equal(['a=a', 'b=b']);
    expect(models([], { TS_MODELS: 'a=a,b=b' })).to.deep.equal(['a=a', 'b=b']);
  });

  it('should name the nearest flag for a misspelt one and reject an unknown log level', () => {
    expect(parseStartOptions(['--metric-mode', 'tslog', '--log-level', 'loud'], {})).to.deep.equal({
      ok: false,
      problems: [
        "unknown option '--metric-mode'; did you mean '--metrics-mode'?",
        "--log-level: expected one of trace, debug, info, warn, error, fatal, silent, got 'loud'",
      ],
    });
  });

  it('should mark an explicit model store as not the default', () => {
    const r = parseStartOptions(['--model-store', 's'], {});
    expect(r.ok && r.options.modelStoreIsDefault).to.equal(false);
  });
});

describe('parseAddress', () => {
  it('should accept TorchServe-style addresses and reject https', () => {
    expect(parseAddress('--x', 'http://127.0.0.1:8080')).to.deep.equal({ host: '127.0.0.1', port: 8080 });
    expect(parseAddress('--x', ':9')).to.deep.equal({ host: '127.0.0.1', port: 9 });
    expect(parseAddress('--x', '0.0.0.0:80')).to.deep.equal({ host: '0.0.0.0', port: 80 });
    expect(() => parseAddress('--x', 'https://h:1')).to.throw('--x: only http:// is supported');
  });
});

describe('metricNamesFilter', () => {
  it('should collect repeated name[] parameters', () => {
    expect(metricNamesFilter('/metrics?name[]=a&name%5B%5D=b&x=1')).to.deep.equal({ names: ['a', 'b'] });
    expect(metricNamesFilter('/metrics')).to.deep.equal({ names: undefined });
  });
});
