/**
 * vLLM's dev-mode sleep, end to end: a REAL `tsserve start --metrics-profile vllm` with
 * VLLM_SERVER_DEV_MODE=1 serving tiny-lm. /sleep stops the model's worker (its engine's
 * `vllm:engine_sleep_state` says discard_all), a completion is then refused with 503 naming
 * /wake_up, /wake_up starts the worker again and the engine serves (awake again).
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openaiClient, tinyLmVariants } from './generation-helpers.js';
import { call, post, removeStores, sample, scrape, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { until } from '../support/until.js';

const state = (s: string): string => `vllm:engine_sleep_state{model_name="tiny-lm",engine="0",sleep_state="${s}"}`;

describe("vLLM's dev-mode /sleep, /wake_up, /is_sleeping (real tsserve start, VLLM_SERVER_DEV_MODE=1)", function () {
  this.timeout(120_000);
  let dir: string;
  let server: Tsserve;

  before(async () => {
    dir = tempDir('sleep-mode');
    const store = tinyLmVariants(path.join(dir, 'store'), { 'tiny-lm': {} });
    server = await startTsserve({
      store,
      args: ['--metrics-profile', 'vllm', '--metrics-mode', 'prometheus', '--disable-system-metrics'],
      env: { ...process.env, VLLM_SERVER_DEV_MODE: '1' },
    });
  });

  after(() => {
    server?.kill();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it('should sleep (worker stopped, discard_all 1), refuse a completion with 503, then wake and serve (awake 1)', async () => {
    const states = async (): Promise<(number | null)[]> => {
      const t = await scrape(server);
      return ['awake', 'weights_offloaded', 'discard_all'].map((s) => sample(t, state(s)));
    };
    expect(await call('GET', `${server.inference}/is_sleeping`)).to.deep.equal({
      status: 200,
      json: { is_sleeping: false },
    });
    expect(await states()).to.deep.equal([1, 0, 0]);
    expect((await post(`${server.inference}/sleep?level=1`, '')).status).to.equal(200);
    expect((await call('GET', `${server.inference}/is_sleeping`)).json).to.deep.equal({ is_sleeping: true });
    expect(await states()).to.deep.equal([0, 0, 1]);
    const refused = await post(`${server.inference}/v1/completions`, { model: 'tiny-lm', prompt: 'hi', max_tokens: 1 });
    expect(refused.status).to.equal(503);
    expect(JSON.stringify(refused.json)).to.contain('it is asleep (POST /wake_up wakes it)');
    expect((await post(`${server.inference}/wake_up`, '')).status).to.equal(200);
    expect((await call('GET', `${server.inference}/is_sleeping`)).json).to.deep.equal({ is_sleeping: false });
    // The worker loads the model again: its engine binds awake.
    await until(async () => ((await states())[0] === 1 ? true : null), { message: 'the woken engine awake' });
    const answer = await openaiClient(server).completions.create({
      model: 'tiny-lm',
      prompt: 'awake',
      max_tokens: 2,
      temperature: 0,
    });
    expect(answer.usage?.completion_tokens).to.equal(2);
    expect(await states()).to.deep.equal([1, 0, 0]);
  });

  it('should refuse a level other than 1 or 2 with 400', async () => {
    const r = await post(`${server.inference}/sleep?level=3`, '');
    expect(r.status).to.equal(400);
    expect(JSON.stringify(r.json)).to.contain('level must be 1 or 2, not \\"3\\"');
  });
});
