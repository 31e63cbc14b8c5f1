/** `tsserve metrics tail`, run as a real process through bin/tsserve.js on a hand-written log dir. */
import { expect } from 'chai';
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { TAIL_USAGE } from '../../tools/cli/metrics-tail.js';
import { until } from '../support/until.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const BIN = path.join(ROOT, 'bin', 'tsserve.js');

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function tsserve(env: NodeJS.ProcessEnv, ...args: string[]): Run {
  const r = spawnSync(process.execPath, [BIN, 'metrics', 'tail', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const TS = [
  '2026-11-21T14:35:06,100 - ts_inference_requests_total.Count:1.0|#model_name:mlp,model_version:default|#hostname:vm,timestamp:1795271706',
  '2026-11-21T14:35:07,100 - ts_inference_requests_total.Count:1.0|#model_name:mlp,model_version:default|#hostname:vm,timestamp:1795271707',
];
const MODEL = [
  '2026-11-21T14:35:06,050 - HandlerTime.ms:2.0|#ModelName:mlp,Level:Model|#hostname:vm,requestID:r1%2Cr2,timestamp:1795271706',
  'not a metric line',
  '2026-11-21T14:35:07,050 - HandlerTime.ms:6.0|#ModelName:mlp,Level:Model|#hostname:vm,requestID:r3,timestamp:1795271707',
];

describe('tsserve metrics tail', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-tail-cli-'));
    // The first model line sits in the rotated copy: --once reads .1 before the current file.
    fs.writeFileSync(path.join(dir, 'model_metrics.log.1'), MODEL[0] + '\n');
    fs.writeFileSync(path.join(dir, 'model_metrics.log'), MODEL.slice(1).join('\n') + '\n');
    fs.writeFileSync(path.join(dir, 'ts_metrics.log'), TS.join('\n') + '\n');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('should print its usage for --help', () => {
    expect(tsserve({}, '--help')).to.deep.equal({ code: 0, stdout: TAIL_USAGE, stderr: '' });
  });

  it('should name the nearest flag for a typo and check values', () => {
    expect(tsserve({}, '--modle', 'x')).to.deep.equal({
      code: 2,
      stdout: '',
      stderr: "tsserve metrics tail: unknown option '--modle'; did you mean '--model'?\n",
    });
    expect(tsserve({}, '--window', '0', '--since', 'later', '--dim', 'x')).to.deep.equal({
      code: 2,
      stdout: '',
      stderr:
        "tsserve metrics tail: --window must be a positive number of seconds, got '0'\ntsserve metrics tail: --dim must be KEY=VALUE, got 'x'\ntsserve metrics tail: --since must be an ISO 8601 time or a duration like 10m, got 'later'\n",
    });
    expect(tsserve({}, '--once', '--log-dir', path.join(dir, 'nope'))).to.deep.equal({
      code: 1,
      stdout: '',
      stderr: `tsserve metrics tail: no log directory ${path.join(dir, 'nope')} (give --log-dir or set TS_LOG_DIR)\n`,
    });
  });

  it('should print the table once, its window ending at the last line kept', () => {
    expect(tsserve({ TS_LOG_DIR: dir }, '--once', '--table')).to.deep.equal({
      code: 0,
      stderr: '',
      stdout: [
        'METRIC                             SERIES                                COUNT     RATE/S  LAST  MEAN  P50  P99',
        'HandlerTime.ms                     ModelName=mlp,Level=Model                 2  0.0333333     6     4    2    6',
        'ts_inference_requests_total.Count  model_name=mlp,model_version=default      2  0.0333333     1     1    1    1',
        '',
        'window 60 s ending 2026-11-21T14:35:07.100Z; COUNT is every line since the start',
        '1 lines were not metric lines',
        '',
      ].join('\n'),
    });
  });

  it('should hide tsserve_* self-metrics unless asked (--self, or --metric naming one), and say how many it hid', () => {
    const self = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-tail-self-'));
    try {
      fs.writeFileSync(
        path.join(self, 'ts_metrics.log'),
        [
          TS[0],
          '2026-11-21T14:35:06,200 - tsserve_flush_batches_total.Count:1.0|#sink:tslog|#hostname:vm,timestamp:1795271706',
          '2026-11-21T14:35:06,300 - tsserve_flush_batches_total.Count:1.0|#sink:tslog|#hostname:vm,timestamp:1795271706',
        ].join('\n') + '\n',
      );
      const rows = (r: Run): string[] =>
        r.stdout.split('\n').filter((l) => /^[a-zA-Z]/.test(l) && !l.startsWith('window'));
      expect(tsserve({}, '--once', '--table', '--log-dir', self).stdout).to.equal(
        [
          'METRIC                             SERIES                                COUNT     RATE/S  LAST  MEAN  P50  P99',
          'ts_inference_requests_total.Count  model_name=mlp,model_version=default      1  0.0166667     1     1    1    1',
          '',
          'window 60 s ending 2026-11-21T14:35:06.100Z; COUNT is every line since the start',
          '2 lines of tsserve_* self-metrics hidden (--self shows them)',
          '',
        ].join('\n'),
      );
      const shown = tsserve({}, '--once', '--table', '--self', '--log-dir', self);
      expect(rows(shown).map((l) => l.split(/\s+/)[0])).to.deep.equal([
        'METRIC',
        'ts_inference_requests_total.Count',
        'tsserve_flush_batches_total.Count',
      ]);
      const named = tsserve({}, '--once', '--json', '--metric', 'tsserve_flush_batches_total', '--log-dir', self);
      expect(named.stdout.split('\n').filter((l) => l !== '').length).to.equal(2);
    } finally {
      fs.rmSync(self, { recursive: true, force: true });
    }
  });

  it('should say, under an empty live table, that the newest line is older than the window and how to read it', async () => {
    const proc = spawn(process.execPath, [BIN, 'metrics', 'tail', '--log-dir', dir, '--table', '--window', '60'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    try {
      const note = await until(() => /^no metric line in the last 60 s: .*$/m.exec(out)?.[0] ?? null, {
        message: 'the empty-window note',
        observe: () => out,
      });
      expect(note.replace(/\(\d+ s ago\)/, '(N s ago)')).to.equal(
        'no metric line in the last 60 s: the newest is from 2026-11-21T14:35:07.100Z (N s ago); --once or --since reads further back',
      );
      proc.kill('SIGINT');
      expect(await exited).to.equal(0);
    } finally {
      proc.kill('SIGKILL');
    }
  });

  it('should write JSON lines in time order across both files (the default into a pipe), from --since on', () => {
    const r = tsserve({}, '--once', '--log-dir', dir, '--since', '2026-11-21T14:35:06,100');
    expect(r.code).to.equal(0);
    expect(
      r.stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => (JSON.parse(l) as { time: string; file: string }).time),
    ).to.deep.equal(['2026-11-21T14:35:06,100', '2026-11-21T14:35:07,050', '2026-11-21T14:35:07,100']);
  });

  it('should print the lines of one request as written, each after its file, and batch lines for each of their ids', () => {
    expect(tsserve({}, '--once', '--table', '--log-dir', dir, '--request', 'r2').stdout).to.equal(
      `model_metrics.log: ${MODEL[0]}\n`,
    );
    // Into a pipe too (the guide's `tail --once --request "$id"`): as written unless --json.
    expect(tsserve({}, '--once', '--log-dir', dir, '--request', 'r2').stdout).to.equal(
      `model_metrics.log: ${MODEL[0]}\n`,
    );
    expect(tsserve({}, '--once', '--log-dir', dir, '--request', 'r1', '--json').stdout).to.equal(
      '{"file":"model_metrics.log","time":"2026-11-21T14:35:06,050","name":"HandlerTime","unit":"ms","value":2,"dimensions":{"ModelName":"mlp","Level":"Model"},"hostname":"vm","requestId":"r1,r2","timestamp":1795271706}\n',
    );
  });

  it('should follow new lines live, through a rotation, and exit 0 on SIGINT', async () => {
    const live = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-tail-live-'));
    const file = path.join(live, 'model_metrics.log');
    const line = (i: number): string =>
      `${new Date().toISOString().slice(0, 19)},${String(i).padStart(3, '0')} - Step.Count:${i}.0|#|#hostname:vm,timestamp:1`;
    fs.writeFileSync(file, line(1) + '\n');
    const proc = spawn(process.execPath, [BIN, 'metrics', 'tail', '--log-dir', live, '--json', '--since', '1d'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    const values = (): number[] =>
      out
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => (JSON.parse(l) as { value: number }).value);
    try {
      await until(() => values().length === 1, { message: 'the first line', observe: () => out });
      fs.appendFileSync(file, line(2) + '\n');
      fs.renameSync(file, `${file}.1`);
      fs.writeFileSync(file, line(3) + '\n');
      await until(() => values().length === 3, { message: 'the lines after the rotation', observe: () => out });
      proc.kill('SIGINT');
      expect(await exited).to.equal(0);
      expect(values()).to.deep.equal([1, 2, 3]);
    } finally {
      proc.kill('SIGKILL');
      fs.rmSync(live, { recursive: true, force: true });
    }
  });
});
