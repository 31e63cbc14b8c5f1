/** `tsserve start` refusing to run: an invalid metrics.yaml or a missing model store. */
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { CLI, tempDir } from './harness.js';

describe('tsserve start (start-up checks)', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => { dir = tempDir('startup'); });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('should print every problem of an invalid metrics.yaml and exit non-zero without serving', () => {
    const bad = path.join(dir, 'bad.yaml');
    fs.writeFileSync(bad, 'ts_metrics:\n  counter:\n    - name: my-metric\n      unit: Count\n    - name: Dup\n      unit: Count\n    - name: Dup\n      unit: Count\n');
    const r = spawnSync(process.execPath, [CLI, 'start', '--metrics-config', bad, '--model-store', dir, '--log-dir', dir], { encoding: 'utf8' });
    expect(r.status).to.equal(1);
    const lines = r.stderr.split('\n').filter((l) => l.startsWith(`${bad}:`));
    expect(lines.length).to.be.at.least(2);
    expect(lines.some((l) => l.startsWith(`${bad}:3:`) && l.includes('my-metric'))).to.equal(true);
    expect(lines.some((l) => l.includes('Dup'))).to.equal(true);
    expect(r.stdout).to.not.contain('Model server started.');
  });

  it('should refuse an explicit --model-store that does not exist', () => {
    const missing = path.join(dir, 'nope');
    const r = spawnSync(process.execPath, [CLI, 'start', '--model-store', missing, '--log-dir', dir], { encoding: 'utf8' });
    expect(r.status).to.equal(1);
    expect(r.stderr).to.contain(`--model-store: directory ${missing} does not exist`);
    expect(fs.existsSync(missing)).to.equal(false);
  });

  it('should list every option with its env name in --help', () => {
    const r = spawnSync(process.execPath, [CLI, 'start', '--help'], { encoding: 'utf8' });
    expect(r.status).to.equal(0);
    for (const flag of ['--inference-address', '--metrics-mode', '--statsd-address', '--metric-time-interval', '--enable-token-auth']) expect(r.stdout).to.contain(flag);
    expect(r.stdout).to.contain('env TS_METRICS_MODE');
  });
});
