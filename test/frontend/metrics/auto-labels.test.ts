/**
 * Automatic labels beyond the hostname: a second one (`replica`) given in the init message of a
 * real forked worker renders in every sink, decided at bind from the labels alone — no sink,
 * cache or ingest code names it. The frontend's own series and another worker's keep theirs.
 */
import { expect } from 'chai';
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import { MetricsIngest } from '../../../frontend/metrics/ingest.js';
import type { AutoLabels } from '../../../schema/metrics-api.js';
import { bindAutoLabels, metricAutoLabels } from '../../../schema/auto-labels.js';
import { config, MODEL_SPECS, spec } from '../../backend/metrics/config.js';
import { until } from '../../support/until.js';
import type { AutoLabelsDone, AutoLabelsInit } from './fixtures/auto-labels-worker.js';

const WORKER = path.join(import.meta.dirname, 'fixtures', 'auto-labels-worker.js');
const CONFIG = config(MODEL_SPECS, { autoDetect: true });

/** Forks a worker with `autoLabels` in its init, announces it to the ingest, resolves on exit. */
function runWorker(
  key: string,
  autoLabels: AutoLabels,
  value: number,
  ingest: MetricsIngest,
  children: ChildProcess[],
): Promise<AutoLabelsDone> {
  return new Promise((resolve, reject) => {
    ingest.started(key, autoLabels);
    const child = fork(WORKER, [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
    let done: AutoLabelsDone | null = null;
    child.on('message', (m: unknown) => {
      if (ingest.handle(key, m)) return;
      if ((m as { type?: unknown }).type === 'fixture.done') done = m as AutoLabelsDone;
    });
    child.on('error', reject);
    // 'close', not 'exit': close waits for the channel's last messages (see ingest-fork.test.ts).
    child.on('close', (code) => {
      if (code === 0 && done !== null) resolve(done);
      else reject(new Error(`worker ${key} exited with ${code}`));
    });
    const init: AutoLabelsInit = {
      type: 'fixture.init',
      metrics: CONFIG,
      autoLabels,
      value,
      passReplica: 'replica' in autoLabels,
    };
    child.send(init);
  });
}

describe('metricAutoLabels', () => {
  it("should name the hostname by the metric's hostLabel and every other automatic label by its key", () => {
    const m = spec('M', 'counter', 'Count', ['ModelName']);
    expect(metricAutoLabels(m, ['hostname', 'replica'])).to.deep.equal([
      { label: 'Hostname', key: 'hostname' },
      { label: 'replica', key: 'replica' },
    ]);
  });

  it('should leave the hostname out of a metric without a host label, and a label a declared dimension already names', () => {
    const m = spec('M', 'counter', 'Count', ['replica'], 'ts_metrics');
    expect(metricAutoLabels(m, ['hostname', 'replica', 'stage'])).to.deep.equal([{ label: 'stage', key: 'stage' }]);
  });
});

describe('bindAutoLabels', () => {
  it('should keep series of processes with other labels apart (an unambiguous key)', () => {
    const m = spec('M', 'counter', 'Count', []);
    const a = bindAutoLabels(m, { hostname: 'h', replica: '1' });
    const b = bindAutoLabels(m, { hostname: 'h', stage: '1' });
    expect([a.names, a.values, a.isHostname, a.hostname]).to.deep.equal([
      ['Hostname', 'replica'],
      ['h', '1'],
      [true, false],
      'h',
    ]);
    expect(a.key).to.not.equal(b.key);
  });
});

describe('Automatic labels of a forked worker', () => {
  let dir = '';
  let udp: dgram.Socket;
  let received: string[] = [];
  let children: ChildProcess[] = [];

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-autolabels-'));
    children = [];
    received = [];
    udp = dgram.createSocket('udp4');
    udp.on('message', (buf) => {
      for (const l of buf.toString('utf8').split('\n')) if (l !== '') received.push(l);
    });
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  });

  afterEach(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    udp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('should render a replica label from the init message in Prometheus, OpenMetrics, tslog and StatsD', async () => {
    const fm = new FrontendMetrics(CONFIG, {
      logDir: dir,
      hostname: 'h',
      modes: ['tslog', 'prometheus', 'statsd'],
      nowMs: () => 1_700_000_000_000,
      statsd: { host: '127.0.0.1', port: udp.address().port },
      statsdFlushMs: 10,
      log: () => undefined,
    });
    const ingest = new MetricsIngest(fm, { log: () => undefined });
    const plain = await runWorker('W-9000', { hostname: 'h' }, 2, ingest, children);
    const forked = await runWorker('W-9001', { hostname: 'h', replica: '1' }, 3, ingest, children);
    fm.get('NoDims')!.bind().record(5);

    expect([plain.dropped, forked.dropped]).to.deep.equal([{}, { bad_dimensions: 1, invalid_name: 1 }]);
    expect(await fm.prometheusText(['InferenceCount', 'NoDims'])).to.equal(
      [
        '# HELP InferenceCount InferenceCount (unit: Count)',
        '# TYPE InferenceCount counter',
        'InferenceCount{ModelName="mlp",Level="Model",Device="cpu",Hostname="h"} 2',
        'InferenceCount{ModelName="mlp",Level="Model",Device="cpu",Hostname="h",replica="1"} 3',
        '',
        '# HELP NoDims NoDims (unit: Count)',
        '# TYPE NoDims counter',
        'NoDims{Hostname="h"} 5',
        '',
      ].join('\n'),
    );
    expect(
      (await fm.prometheusText(['InferenceCount'], 'openmetrics'))
        .split('\n')
        .filter((l) => l.startsWith('InferenceCount_total')),
    ).to.deep.equal([
      'InferenceCount_total{ModelName="mlp",Level="Model",Device="cpu",Hostname="h"} 2',
      'InferenceCount_total{ModelName="mlp",Level="Model",Device="cpu",Hostname="h",replica="1"} 3',
    ]);
    await fm.close();
    expect(fs.readFileSync(path.join(dir, 'model_metrics.log'), 'utf8').split('\n')).to.deep.equal([
      '2023-11-14T22:13:20,000 - InferenceCount.Count:2.0|#ModelName:mlp,Level:Model,Device:cpu|#hostname:h,timestamp:1700000000',
      '2023-11-14T22:13:20,000 - InferenceCount.Count:3.0|#ModelName:mlp,Level:Model,Device:cpu,replica:1|#hostname:h,timestamp:1700000000',
      '2023-11-14T22:13:20,000 - NoDims.Count:5.0|#|#hostname:h,timestamp:1700000000',
      '',
    ]);
    const want = [
      'InferenceCount:2|c|#ModelName:mlp,Level:Model,Device:cpu,Hostname:h',
      'InferenceCount:3|c|#ModelName:mlp,Level:Model,Device:cpu,Hostname:h,replica:1',
      'NoDims:5|c|#Hostname:h',
    ];
    await until(() => want.every((l) => received.includes(l)), {
      message: 'the three statsd lines',
      observe: () => received,
    });
    expect(received.filter((l) => !l.startsWith('tsserve_'))).to.deep.equal(want);
  });
});
