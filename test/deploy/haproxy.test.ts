/**
 * deploy/haproxy/haproxy.cfg against the server it balances: its timeouts leave tsserve the
 * time its models may take (the runs themselves are in test/e2e/instances.test.ts).
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { load } from 'js-yaml';
import { generateStore } from '../../tools/models/store.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const CFG = path.join(ROOT, 'deploy', 'haproxy', 'haproxy.cfg');

/** The value of `timeout <what>` in the cfg's defaults. */
function timeout(what: string): string | undefined {
  return new RegExp(`^\\s*timeout ${what} (\\S+)$`, 'm').exec(fs.readFileSync(CFG, 'utf8'))?.[1];
}

describe('deploy/haproxy/haproxy.cfg', () => {
  let store = '';
  before(async () => {
    store = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-haproxy-'));
    await generateStore(store);
  });
  after(() => fs.rmSync(store, { recursive: true, force: true }));

  it('should wait on a server longer than the longest responseTimeout of the demo models (at 60 s it answered 504 itself for tiny-lm, which has 120 s)', () => {
    const timeouts = fs.readdirSync(store).filter((d) => !d.startsWith('.')).sort()
      .map((d) => [d, (load(fs.readFileSync(path.join(store, d, 'model-config.yaml'), 'utf8')) as { responseTimeout: number }).responseTimeout]);
    expect(timeouts).to.deep.equal([['custom', 30], ['mlp', 30], ['tiny-lm', 120], ['tiny-lm-hf', 120], ['tiny-omni', 120], ['tiny-vocoder', 60]]);
    expect([timeout('client'), timeout('server')]).to.deep.equal(['125s', '125s']);
    expect(parseInt(timeout('server') ?? '0', 10)).to.be.greaterThan(Math.max(...timeouts.map(([, t]) => t as number)));
  });
});
