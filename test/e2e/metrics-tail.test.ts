/**
 * `tsserve metrics tail --once` against the metric logs of the REAL server: predictions to the
 * `mlp` model and to the `custom` user handler, then exact counts, aggregates that match the
 * lines, and everything one request wrote across ts_metrics.log and model_metrics.log.
 */
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parseTslogLine } from '../../frontend/metrics/sinks/tslog-format.js';
import { percentile } from '../../tools/tail/window.js';
import { formatCell } from '../../tools/tail/table.js';
import { CLI, generateStore, mlpInput, post, ROOT, startTsserve } from './harness.js';
import type { Tsserve } from './harness.js';
import { until } from '../support/until.js';

const N_MLP = 6;
const N_CUSTOM = 4;

interface JsonLine {
  file: string;
  time: string;
  name: string;
  value: number;
  dimensions: Record<string, string>;
  requestId: string | null;
}

function tail(server: Tsserve, ...args: string[]): string {
  const r = spawnSync(process.execPath, [CLI, 'metrics', 'tail', '--once', '--log-dir', server.logDir, ...args], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`tsserve metrics tail exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

function jsonLines(text: string): JsonLine[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as JsonLine);
}

describe('tsserve metrics tail (real server logs)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  const customIds: string[] = [];

  before(async () => {
    server = await startTsserve({
      store: generateStore(['mlp', 'custom']),
      args: [
        '--metrics-config',
        path.join(ROOT, 'examples', 'custom-metrics', 'metrics.yaml'),
        '--metrics-mode',
        'tslog',
        '--disable-system-metrics',
      ],
    });
    const mlp = await Promise.all(
      Array.from({ length: N_MLP }, (_v, i) => post(`${server.inference}/predictions/mlp`, mlpInput(i))),
    );
    const custom = await Promise.all(
      Array.from({ length: N_CUSTOM }, (_v, i) => post(`${server.inference}/predictions/custom`, mlpInput(i))),
    );
    expect([...mlp, ...custom].map((r) => r.status)).to.deep.equal(Array(N_MLP + N_CUSTOM).fill(200));
    for (const r of custom) customIds.push(r.requestId ?? '');
    // The sink writes on a timer: wait until every request's lines are in both files.
    await until(
      () => {
        const lines = jsonLines(tail(server, '--json', '--metric', 'ts_inference_requests_total,SizeOfImage'));
        return (
          lines.filter((l) => l.name === 'ts_inference_requests_total').length === N_MLP + N_CUSTOM &&
          lines.filter((l) => l.name === 'SizeOfImage').length === N_CUSTOM
        );
      },
      { message: 'every request in the metric logs' },
    );
  });

  after(() => server?.kill());

  it('should count exactly one ts_inference_requests_total line per request, per model', () => {
    const lines = jsonLines(tail(server, '--json', '--metric', 'ts_inference_requests_total'));
    expect(lines.map((l) => [l.file, l.dimensions.model_name, l.value]).sort()).to.deep.equal([
      ...Array.from({ length: N_CUSTOM }, () => ['ts_metrics.log', 'custom', 1]),
      ...Array.from({ length: N_MLP }, () => ['ts_metrics.log', 'mlp', 1]),
    ]);
    expect(
      jsonLines(tail(server, '--json', '--metric', 'ts_inference_requests_total', '--model', 'mlp')).length,
    ).to.equal(N_MLP);
    expect(
      jsonLines(tail(server, '--json', '--metric', 'ts_inference_requests_total', '--dim', 'model_name=custom')).length,
    ).to.equal(N_CUSTOM);
  });

  it('should print table rows whose aggregates are exactly those of the lines', () => {
    const handler = jsonLines(tail(server, '--json', '--metric', 'HandlerTime', '--model', 'mlp'));
    expect(handler.length).to.be.greaterThan(0);
    const values = handler.map((l) => l.value);
    const sorted = [...values].sort((a, b) => a - b);
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    const rows = tail(
      server,
      '--table',
      '--window',
      '3600',
      '--metric',
      'HandlerTime,ts_inference_requests_total',
      '--model',
      'mlp',
    ).split('\n');
    const cells = (prefix: string): string[] => (rows.find((r) => r.startsWith(prefix)) ?? '').split(/ {2,}/);
    const last = handler[handler.length - 1] as JsonLine;
    expect(cells('HandlerTime.ms')).to.deep.equal([
      'HandlerTime.ms',
      Object.entries(last.dimensions)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
      String(values.length),
      formatCell(values.length / 3600),
      formatCell(last.value),
      formatCell(mean),
      formatCell(percentile(sorted, 50)),
      formatCell(percentile(sorted, 99)),
    ]);
    expect(cells('ts_inference_requests_total.Count')).to.deep.equal([
      'ts_inference_requests_total.Count',
      'model_name=mlp,model_version=default',
      String(N_MLP),
      formatCell(N_MLP / 3600),
      '1',
      '1',
      '1',
      '1',
    ]);
  });

  // Both files are read; today only model_metrics.log lines carry a requestID (the frontend's
  // ts_metrics.log lines have none), so `expected` is built from both files the same way.
  it('should list exactly the lines of one request, across both files, in time order', () => {
    const id = customIds[0] as string;
    const expected: { file: string; time: string; name: string; value: number }[] = [];
    for (const file of ['ts_metrics.log', 'model_metrics.log']) {
      for (const raw of fs.readFileSync(path.join(server.logDir, file), 'utf8').split('\n')) {
        const l = raw === '' ? null : parseTslogLine(raw);
        if (l !== null && l.requestId !== null && l.requestId.split(',').includes(id))
          expected.push({ file, time: l.time, name: l.name, value: l.value });
      }
    }
    expected.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
    const got = jsonLines(tail(server, '--request', id, '--json')).map((l) => ({
      file: l.file,
      time: l.time,
      name: l.name,
      value: l.value,
    }));
    expect(got).to.deep.equal(expected);
    expect(got.filter((l) => l.file === 'model_metrics.log' && l.name === 'SizeOfImage').length).to.equal(1);
  });
});
