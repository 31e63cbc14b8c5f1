/** `tsserve start` refusing to run: an invalid metrics.yaml or a missing model store. */
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { call, CLI, freePort, generateStore, mlpInput, post, removeStores, startTsserve, tempDir } from './harness.js';

describe('tsserve start (start-up checks)', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = tempDir('startup');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('should print every problem of an invalid metrics.yaml and exit non-zero without serving', () => {
    const bad = path.join(dir, 'bad.yaml');
    fs.writeFileSync(
      bad,
      'ts_metrics:\n  counter:\n    - name: my-metric\n      unit: Count\n    - name: Dup\n      unit: Count\n    - name: Dup\n      unit: Count\n',
    );
    const r = spawnSync(
      process.execPath,
      [CLI, 'start', '--metrics-config', bad, '--model-store', dir, '--log-dir', dir],
      { encoding: 'utf8' },
    );
    expect([r.status, r.stdout]).to.deep.equal([1, '']);
    expect(r.stderr).to.equal(
      [
        `tsserve start: invalid metrics config ${bad} (2 problem(s)); not starting:`,
        `${bad}:3:13: metric "my-metric" in ts_metrics.counter: name "my-metric" is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); use letters, digits, _ and :, e.g. "my_metric"`,
        `${bad}:7:13: metric "Dup" in ts_metrics.counter: name already used by the metric in ts_metrics.counter at line 5; names must be unique across the file (any section, any type), rename one`,
        '',
      ].join('\n'),
    );
  });

  it('should name the listener and its flag when its address is taken, and exit 1', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const [mgmt, met] = [await freePort(), await freePort()];
      // The bind fails in the kernel, so the blocked event loop of spawnSync does not matter.
      const r = spawnSync(
        process.execPath,
        [
          CLI,
          'start',
          '--model-store',
          dir,
          '--log-dir',
          dir,
          '--inference-address',
          `127.0.0.1:${port}`,
          '--management-address',
          `127.0.0.1:${mgmt}`,
          '--metrics-address',
          `127.0.0.1:${met}`,
        ],
        { encoding: 'utf8' },
      );
      expect(r.status).to.equal(1);
      expect(r.stdout).to.contain(
        `"msg":"tsserve start: inference listener http://127.0.0.1:${port} (--inference-address): the address is already in use"`,
      );
    } finally {
      taken.close();
    }
  });

  it('should name the listener and its flag when its address is taken with --api-server-count 2 too, and exit 1 without restarting a front (regression: "front process N exited before listening (code 1)", a restart counted, and each front\'s stack as fatal)', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const [mgmt, met] = [await freePort(), await freePort()];
      const r = spawnSync(
        process.execPath,
        [
          CLI,
          'start',
          '--model-store',
          dir,
          '--log-dir',
          dir,
          '--inference-address',
          `127.0.0.1:${port}`,
          '--management-address',
          `127.0.0.1:${mgmt}`,
          '--metrics-address',
          `127.0.0.1:${met}`,
          '--api-server-count',
          '2',
        ],
        { encoding: 'utf8' },
      );
      expect(r.status).to.equal(1);
      const errors = r.stdout
        .split('\n')
        .filter((l) => /"level":"(error|fatal)"/.test(l))
        .map((l) => (JSON.parse(l) as { msg: string }).msg);
      expect(errors).to.deep.equal([
        `tsserve start: inference listener http://127.0.0.1:${port} (--inference-address): the address is already in use`,
      ]);
    } finally {
      taken.close();
    }
  });

  it('should refuse an explicit --model-store that does not exist', () => {
    const missing = path.join(dir, 'nope');
    const r = spawnSync(process.execPath, [CLI, 'start', '--model-store', missing, '--log-dir', dir], {
      encoding: 'utf8',
    });
    expect([r.status, r.stdout]).to.deep.equal([1, '']);
    expect(r.stderr).to.equal(
      `tsserve start: --model-store: directory ${missing} does not exist (generate one with: tsserve models generate ${missing})\n`,
    );
    expect(fs.existsSync(missing)).to.equal(false);
  });

  it("should refuse vLLM's switches set to what vLLM's int() refuses, both named, before binding anything (exit 2)", () => {
    const r = spawnSync(process.execPath, [CLI, 'start', '--model-store', dir, '--log-dir', dir], {
      encoding: 'utf8',
      env: { ...process.env, VLLM_SERVER_DEV_MODE: 'yes', VLLM_COMPUTE_NANS_IN_LOGITS: 'true' },
    });
    const why = 'is not a whole number: vLLM reads it with int(), 0 for off, 1 (any other whole number) for on';
    expect([r.status, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      `tsserve start: VLLM_SERVER_DEV_MODE="yes" ${why}\ntsserve start: VLLM_COMPUTE_NANS_IN_LOGITS="true" ${why}\n`,
    ]);
  });

  it('should refuse a --models entry without a name and a name given twice before binding anything (exit 2)', () => {
    const run = (models: string) =>
      spawnSync(process.execPath, [CLI, 'start', '--models', models, '--model-store', dir, '--log-dir', dir], {
        encoding: 'utf8',
      });
    const noName = run('=mlp');
    expect([noName.status, noName.stdout, noName.stderr]).to.deep.equal([
      2,
      '',
      "tsserve start: --models: '=mlp' has no name (use NAME=DIR)\n",
    ]);
    const twice = run('mlp=mlp,mlp=custom');
    expect([twice.status, twice.stdout, twice.stderr]).to.deep.equal([
      2,
      '',
      "tsserve start: --models: the name 'mlp' is given twice\n",
    ]);
    const mixed = run('none,mlp=mlp');
    expect([mixed.status, mixed.stdout, mixed.stderr]).to.deep.equal([
      2,
      '',
      "tsserve start: --models: 'none' cannot be combined with NAME=DIR entries\n",
    ]);
  });

  it('should start with no model under --models none, as TorchServe starts without --models, and serve one registered later', async () => {
    const store = generateStore(['mlp']);
    const server = await startTsserve({ store, args: ['--models', 'none', '--metrics-mode', 'off'] });
    try {
      expect(await call('GET', `${server.management}/models`)).to.deep.equal({ status: 200, json: { models: [] } });
      const reg = await call('POST', `${server.management}/models?url=mlp&initial_workers=1&synchronous=true`);
      expect(reg.status).to.equal(200);
      const r = await post(`${server.inference}/predictions/mlp`, { data: mlpInput(1) });
      expect([r.status, (r.json as number[]).length]).to.deep.equal([200, 10]);
    } finally {
      server.kill();
      removeStores();
    }
  });

  it("should fail a --log-dir or a generated store it cannot create (under /proc) with mkdir's error, not spin (Node 20's recursive mkdir retried that for ever)", () => {
    const opts = { encoding: 'utf8' as const, timeout: 30_000 };
    const start = spawnSync(
      process.execPath,
      [CLI, 'start', '--log-dir', '/proc/tsserve-x/logs', '--model-store', dir],
      opts,
    );
    expect([start.status, start.stdout, start.stderr]).to.deep.equal([
      1,
      '',
      "tsserve start: --log-dir: cannot write logs in /proc/tsserve-x/logs: ENOENT: no such file or directory, mkdir '/proc/tsserve-x'\n",
    ]);
    const gen = spawnSync(process.execPath, [CLI, 'models', 'generate', '/proc/tsserve-x/store'], opts);
    expect([gen.status, gen.stderr]).to.deep.equal([
      1,
      "tsserve models generate: ENOENT: no such file or directory, mkdir '/proc/tsserve-x'\n",
    ]);
  });

  it('should list every option with its env name in --help', () => {
    const r = spawnSync(process.execPath, [CLI, 'start', '--help'], { encoding: 'utf8' });
    expect([r.status, r.stderr]).to.deep.equal([0, '']);
    // Each option line, paired with the env line under it (--help has none).
    const lines = r.stdout.split('\n');
    const pairs = lines.flatMap((l, i) => {
      const flag = /^ {2}(?:-[a-z], )?(--[a-z-]+) /.exec(l)?.[1];
      return flag === undefined ? [] : [[flag, /^ +env (TS_[A-Z_]+)$/.exec(lines[i + 1] ?? '')?.[1] ?? null]];
    });
    const flags = [
      '--inference-address',
      '--management-address',
      '--metrics-address',
      '--model-store',
      '--models',
      '--metrics-config',
      '--metrics-profile',
      '--metrics-mode',
      '--statsd-address',
      '--otlp-metrics-endpoint',
      '--otlp-traces-endpoint',
      '--log-dir',
      '--log-level',
      '--metric-time-interval',
      '--disable-system-metrics',
      '--enable-token-auth',
      '--max-request-size',
      '--max-json-depth',
      '--max-json-elements',
      '--request-timeout',
      '--header-timeout',
      '--request-idle-timeout',
      '--job-queue-size',
      '--disable-log-stats',
      '--enable-mfu-metrics',
      '--log-stats-interval',
      '--max-workers',
      '--model-load-timeout',
      '--shutdown-timeout',
      '--api-server-count',
      '--chat-template',
      '--show-hidden-metrics-for-version',
    ];
    expect(pairs).to.deep.equal([
      ...flags.map((f) => [f, `TS_${f.slice(2).replace(/-/g, '_').toUpperCase()}`]),
      ['--help', null],
    ]);
  });
});
