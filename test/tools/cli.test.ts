/** The `tsserve` command line as a user runs it: help, version, unknown flags (bin/tsserve.js). */
import { expect } from 'chai';
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const CLI = path.join(ROOT, 'bin', 'tsserve.js');

function tsserve(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('tsserve CLI', function () {
  this.timeout(60_000);

  it('should print the package version for --version and -v', () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(tsserve('--version')).to.deep.equal({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(tsserve('-v')).to.deep.equal({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it("should open each command's --help with its usage line", () => {
    const first = (...args: string[]): [number | null, string[]] => {
      const r = tsserve(...args);
      return [r.code, r.stdout.split('\n').slice(0, 2)];
    };
    expect(first('--help')).to.deep.equal([0, ['Usage: tsserve <command> [options]', '']]);
    expect(first('start', '--help')).to.deep.equal([0, ['Usage: tsserve start [options]', '']]);
    expect(first('start', '-h')).to.deep.equal([0, ['Usage: tsserve start [options]', '']]);
    expect(first('metrics', 'validate', '--help')).to.deep.equal([
      0,
      ['Usage:', '  tsserve metrics validate FILE [FILE...]'],
    ]);
    expect(first('metrics', 'list', '--help')).to.deep.equal([
      0,
      ['Usage:', '  tsserve metrics validate FILE [FILE...]'],
    ]);
    expect(first('models', 'generate', '--help')).to.deep.equal([
      0,
      ['Usage: tsserve models generate [DIR] [--force] [--only NAME[,NAME...]]', ''],
    ]);
    expect(first('generate', '--help')).to.deep.equal([
      0,
      ['Usage: tsserve generate --model DIR --input FILE.jsonl [--output FILE.jsonl] [--set KEY=VALUE ...]', ''],
    ]);
  });

  it("should keep the offline commands' --help within 100 columns (generate's ran to 150)", () => {
    const long = [['generate'], ['speak'], ['models', 'generate']].flatMap((cmd) =>
      tsserve(...cmd, '--help')
        .stdout.split('\n')
        .filter((l) => l.length > 100)
        .map((l) => `${cmd.join(' ')}: ${l}`),
    );
    expect(long).to.deep.equal([]);
  });

  it('should list the log options in start --help', () => {
    const lines = tsserve('start', '--help').stdout.split('\n');
    expect(lines.filter((l) => l.startsWith('  --log-'))).to.deep.equal([
      '  --log-dir VALUE                 directory of ts_log.log, access_log.log, ts_metrics.log, model_metrics.log and key_file.json (default ./logs)',
      '  --log-level VALUE               trace|debug|info|warn|error|fatal|silent: least level written to ts_log.log and the console (default info)',
      "  --log-stats-interval VALUE      seconds between the generation engines' stat lines (0: 10) (default 10)",
    ]);
  });

  it('should refuse a --log-dir it cannot create and a --model-store that is a file with one line and exit 1, not a stack trace or a log line', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-cli-'));
    try {
      const file = path.join(dir, 'file');
      fs.writeFileSync(file, '');
      const store = path.join(dir, 'store');
      fs.mkdirSync(store);
      expect(tsserve('start', '--model-store', store, '--log-dir', file)).to.deep.equal({
        code: 1,
        stdout: '',
        stderr: `tsserve start: --log-dir: ${file} exists and is not a directory\n`,
      });
      // A file as the store: refused before anything binds (it bound the three listeners, then logged ENOTDIR from scandir).
      expect(tsserve('start', '--model-store', file, '--log-dir', path.join(dir, 'logs'))).to.deep.equal({
        code: 1,
        stdout: '',
        stderr: `tsserve start: --model-store: ${file} exists and is not a directory\n`,
      });
      expect(tsserve('start', '--model-store', store, '--log-dir', path.join(file, 'logs'))).to.deep.equal({
        code: 1,
        stdout: '',
        stderr: `tsserve start: --log-dir: cannot write logs in ${path.join(file, 'logs')}: ENOTDIR: not a directory, mkdir '${path.join(file, 'logs')}'\n`,
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should warn that --statsd-address is not used when the metrics mode has no statsd (it was silently ignored)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-cli-'));
    try {
      fs.mkdirSync(path.join(dir, 'store'));
      const any = 'http://127.0.0.1:0';
      const proc = spawn(
        process.execPath,
        [
          CLI,
          'start',
          '--model-store',
          path.join(dir, 'store'),
          '--log-dir',
          path.join(dir, 'logs'),
          '--disable-system-metrics',
          '--inference-address',
          any,
          '--management-address',
          any,
          '--metrics-address',
          any,
          '--statsd-address',
          '127.0.0.1:9',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
      await new Promise<void>((resolve) =>
        proc.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('Model server started.')) resolve();
        }),
      );
      proc.kill('SIGTERM');
      expect(await exited).to.equal(0);
      const records = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level: string; msg: string });
      expect(records.filter((r) => r.level !== 'info').map((r) => [r.level, r.msg])).to.deep.equal([
        [
          'warn',
          '--statsd-address 127.0.0.1:9 is not used: the metrics mode is tslog,prometheus (add statsd to --metrics-mode to send there)',
        ],
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should refuse an unknown flag with exit 2, naming the nearest known flag', () => {
    expect(tsserve('start', '--metric-mode', 'tslog')).to.deep.equal({
      code: 2,
      stdout: '',
      stderr: "tsserve start: unknown option '--metric-mode'; did you mean '--metrics-mode'?\n",
    });
    expect(tsserve('metrics', 'list', '--fromat', 'json')).to.deep.equal({
      code: 2,
      stdout: '',
      stderr: "tsserve metrics list: unknown option '--fromat'; did you mean '--format'?\n",
    });
    expect(tsserve('models', 'generate', '--frce')).to.deep.equal({
      code: 2,
      stdout: '',
      stderr: "tsserve models generate: unknown option '--frce'; did you mean '--force'?\n",
    });
    expect(tsserve('--verison')).to.deep.equal({
      code: 2,
      stdout: '',
      stderr: "tsserve: unknown option '--verison'; did you mean '--version'?\n",
    });
  });

  it("should list every problem of a generate --model directory's model-config.yaml at its file:line:col, as a registration does (offline it had no position)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-gen-cfg-'));
    try {
      const cfg = path.join(dir, 'model-config.yaml');
      // The model's dims follow the two bad keys (a block without them is refused for each).
      fs.writeFileSync(
        cfg,
        'handler: generate\nmodel: model.onnx\nengine:\n  layout: fast\n  blockSize: "sixteen"\n  maxNumSeqs: 0\n' +
          '  vocabSize: 259\n  numLayers: 4\n  numHeads: 4\n  headDim: 64\n  bosTokenId: 256\n  eosTokenId: 257\n  padTokenId: 258\n',
      );
      fs.writeFileSync(path.join(dir, 'model.onnx'), '');
      fs.writeFileSync(path.join(dir, 'p.jsonl'), '{"prompt":"hi","max_tokens":2}\n');
      expect(tsserve('generate', '--model', dir, '--input', path.join(dir, 'p.jsonl'))).to.deep.equal({
        code: 1,
        stdout: '',
        stderr: [
          `tsserve generate: ${cfg}:5:14: engine.blockSize: must be an integer >= 1, got "sixteen"`,
          `tsserve generate: ${cfg}:6:15: engine.maxNumSeqs: must be an integer >= 1, got 0`,
          '',
        ].join('\n'),
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should end quietly with exit 0 when its reader closes the pipe early (`| head`), not die on an unhandled EPIPE with a stack', async () => {
    // The reader is gone before the command writes: its one write of the rules text gets EPIPE
    // (after the first chunk the rest would still fit the pipe's buffer and never fail).
    const child = spawn(process.execPath, [CLI, 'metrics', 'rules'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect([code, stderr]).to.deep.equal([0, '']);
  });

  it('should name the nearest command for an unknown one', () => {
    const r = tsserve('strat');
    expect([r.code, r.stderr.split('\n')[0]]).to.deep.equal([
      2,
      "tsserve: unknown command 'strat'; did you mean 'start'?",
    ]);
  });
});
