/**
 * A pipeline stage's engine: its `stage` and `replica` automatic labels stand in for the
 * declared `engine` dimension, decided at bind (schema/auto-labels.ts), in every sink — one
 * label set per series, no relabelling shim; a lone engine keeps `engine`.
 */
import { expect } from 'chai';
import * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import { supersededDimensions } from '../../../schema/auto-labels.js';
import { config, spec } from '../../backend/metrics/config.js';
import { until } from '../../support/until.js';

const CONFIG = config([
  spec('ts_generation_tokens_total', 'counter', 'Tokens', ['model_name', 'engine'], 'ts_metrics'),
]);

describe('supersededDimensions', () => {
  it('should supersede engine only when both stage and replica are automatic labels', () => {
    expect(supersededDimensions(['model_name', 'engine'], ['hostname', 'stage', 'replica'])).to.deep.equal([1]);
    expect(supersededDimensions(['model_name', 'engine'], ['hostname', 'replica'])).to.deep.equal([]);
    expect(supersededDimensions(['model_name'], ['stage', 'replica'])).to.deep.equal([]);
  });
});

describe('engine families of a pipeline stage', () => {
  let dir: string;
  let udp: dgram.Socket;
  const received: string[] = [];

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-superseded-'));
    udp = dgram.createSocket('udp4');
    udp.on('message', (buf) => {
      for (const l of buf.toString('utf8').split('\n')) if (l !== '') received.push(l);
    });
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  });

  afterEach(() => {
    udp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('should render stage and replica instead of engine in Prometheus, tslog and StatsD', async () => {
    const fm = new FrontendMetrics(CONFIG, {
      logDir: dir,
      hostname: 'h',
      modes: ['tslog', 'prometheus', 'statsd'],
      nowMs: () => 1_700_000_000_000,
      statsd: { host: '127.0.0.1', port: udp.address().port },
      statsdFlushMs: 10,
      log: () => undefined,
    });
    const m = fm.get('ts_generation_tokens_total')!;
    m.bind({ model_name: 'tiny-lm', engine: '0' }).record(2);
    m.bind({ model_name: 'tiny-omni', engine: '1' }, { hostname: 'h', stage: 'thinker', replica: '1' }).record(3);
    expect(await fm.prometheusText(['ts_generation_tokens_total'])).to.equal(
      [
        '# HELP ts_generation_tokens_total ts_generation_tokens_total (unit: Tokens)',
        '# TYPE ts_generation_tokens_total counter',
        'ts_generation_tokens_total{model_name="tiny-lm",engine="0"} 2',
        'ts_generation_tokens_total{model_name="tiny-omni",stage="thinker",replica="1"} 3',
        '',
      ].join('\n'),
    );
    await fm.close();
    expect(
      fs
        .readFileSync(path.join(dir, 'ts_metrics.log'), 'utf8')
        .split('\n')
        .filter((l) => l.includes(' - ts_generation')),
    ).to.deep.equal([
      '2023-11-14T22:13:20,000 - ts_generation_tokens_total.Tokens:2.0|#model_name:tiny-lm,engine:0|#hostname:h,timestamp:1700000000',
      '2023-11-14T22:13:20,000 - ts_generation_tokens_total.Tokens:3.0|#model_name:tiny-omni,stage:thinker,replica:1|#hostname:h,timestamp:1700000000',
    ]);
    const want = [
      'ts_generation_tokens_total:2|c|#model_name:tiny-lm,engine:0',
      'ts_generation_tokens_total:3|c|#model_name:tiny-omni,stage:thinker,replica:1',
    ];
    await until(() => want.every((l) => received.includes(l)), {
      message: 'the two statsd lines',
      observe: () => received,
    });
  });
});
