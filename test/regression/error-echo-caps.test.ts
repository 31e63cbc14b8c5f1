/**
 * Issue 26 item 5: errors echoed unbounded input: a 900,001-digit number made a 900 KB 400 body,
 * 50,000 bad logit_bias ids a 338 KB error, a 900,000-character name one 900,000-character
 * validate line. Each echo is now cut, with how much was left out (`…(N more)`), against the
 * real server on loopback.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, generateStore, post, removeStores, startTsserve, tempDir } from '../e2e/harness.js';
import type { Tsserve } from '../e2e/harness.js';

const DIGITS = '9'.repeat(900_001);
const LONG = 'x'.repeat(900_000);

describe('regression: every error that echoes input caps what it echoes (issue 26 item 5, real tsserve start)', function () {
  this.timeout(60_000);
  let server: Tsserve;
  before(async () => {
    server = await startTsserve({
      store: generateStore(['mlp', 'tiny-lm']),
      args: ['--metrics-mode', 'prometheus', '--disable-system-metrics'],
    });
  });
  after(() => {
    server?.kill();
    removeStores();
  });

  it('should answer a 900,001-digit number with its first 40 digits, on /predictions and the Open Inference Protocol', async () => {
    const ts = await post(`${server.inference}/predictions/mlp`, `[${DIGITS}]`);
    expect(ts).to.deep.include({
      status: 400,
      json: {
        code: 400,
        type: 'BadRequestException',
        message: `element 0 (${'9'.repeat(40)}…(899961 more)) is not finite in float32 (largest magnitude 3.4028234663852886e38)`,
      },
    });
    const oip = await post(
      `${server.inference}/v2/models/mlp/infer`,
      `{"inputs":[{"name":"input","shape":[1,1],"datatype":"FP32","data":[${DIGITS}]}]}`,
    );
    expect(oip).to.deep.include({
      status: 400,
      json: {
        error: `input 'input': element 0 (${'9'.repeat(40)}…(899961 more)) is not finite in float32 (largest magnitude 3.4028234663852886e38)`,
      },
    });
  });

  it('should list 16 of 50,000 out-of-vocabulary logit_bias ids and count the rest', async () => {
    const bias: Record<string, number> = {};
    for (let i = 0; i < 50_000; i++) bias[String(100_000 + i)] = 1;
    const r = await post(`${server.inference}/v1/completions`, {
      model: 'tiny-lm',
      prompt: 'hi',
      max_tokens: 2,
      logit_bias: bias,
    });
    const ids = Array.from({ length: 16 }, (_, i) => 100_000 + i).join(', ');
    expect(r).to.deep.include({
      status: 400,
      json: {
        error: {
          message: `token_id(s) [${ids}, …(49984 more)] in logit_bias contain out-of-vocab token ids. Vocabulary size: 259`,
          type: 'invalid_request_error',
          param: 'logit_bias',
          code: null,
        },
      },
    });
  });

  it('should cut a 900,000-character model name, key, value and input name to an excerpt', async () => {
    const model = await post(`${server.inference}/v1/completions`, { model: LONG, prompt: 'hi' });
    expect(model).to.deep.include({
      status: 404,
      json: {
        error: {
          message: `The model \`${'x'.repeat(80)}…(899920 more)\` does not exist.`,
          type: 'not_found_error',
          param: 'model',
          code: 'model_not_found',
        },
      },
    });
    const value = await post(`${server.inference}/v1/completions`, {
      model: 'tiny-lm',
      prompt: 'hi',
      temperature: LONG,
    });
    expect((value.json as { error: { message: string } }).error.message).to.equal(
      `temperature must be a number between 0 and 2, got "${'x'.repeat(80)}"…(899920 more)`,
    );
    const key = await post(`${server.inference}/v1/completions`, { model: 'tiny-lm', prompt: 'hi', [LONG]: 1 });
    const err = (key.json as { error: { message: string; param: string } }).error;
    expect(err.message).to.equal(
      `Unsupported parameter: "${'x'.repeat(80)}"…(899920 more) is not supported by this server.`,
    );
    expect(err.param).to.equal(`${'x'.repeat(1000)}…(899000 more)`);
    const input = await post(`${server.inference}/v2/models/mlp/infer`, {
      inputs: [{ name: LONG, shape: [1, 784], datatype: 'FP32', data: new Array<number>(784).fill(0) }],
    });
    expect(input).to.deep.include({
      status: 400,
      json: {
        error: `unexpected input "${'x'.repeat(64)}"…(899936 more) for model 'mlp' (it takes input (FP32 [N,784]))`,
      },
    });
  });

  it('should validate a metrics.yaml with a 900,000-character name in one line of its first 64 characters', () => {
    const file = path.join(tempDir('long-name'), 'metrics.yaml');
    fs.writeFileSync(
      file,
      `model_metrics:\n  counter:\n    - name: ${LONG}\n      unit: Count\n      dimensions: []\n`,
    );
    const r = spawnSync(process.execPath, [CLI, 'metrics', 'validate', file], { encoding: 'utf8' });
    expect([r.status, r.stdout + r.stderr]).to.deep.equal([
      1,
      `${file}:3:13: metric "${'x'.repeat(64)}"…(899936 more) in model_metrics.counter: name has 900000 characters, more than 256; shorten it\n`,
    ]);
  });
});
