/**
 * vLLM's switched families end to end: a REAL `tsserve start --metrics-profile vllm` with
 * `--enable-mfu-metrics` and `VLLM_COMPUTE_NANS_IN_LOGITS=1`. After one completion of known
 * prompt and output lengths, the MFU counters equal the estimate worked out here from the tiny
 * LM's shapes (one prefill of P tokens, then N − 1 decode steps; docs/llm-metrics.md), and
 * corrupted_requests has its series at 0 (the tiny LM gives no NaN). The same profile without the
 * switches is test/e2e/vllm-profile.test.ts (MFU at 0, no corrupted_requests series).
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { D_MODEL, FFN_DIM, HEAD_DIM, NUM_HEADS, NUM_LAYERS, VOCAB_SIZE } from '../../tools/models/tiny-lm-spec.js';
import { openaiClient, tinyLmVariants } from './generation-helpers.js';
import { removeStores, sample, scrape, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { until } from '../support/until.js';

describe('vLLM profile with --enable-mfu-metrics and VLLM_COMPUTE_NANS_IN_LOGITS=1 (real tsserve start)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: Tsserve;

  before(async () => {
    dir = tempDir('vllm-switches');
    // The block's own compute_nans_in_logits: false yields to the server's switch (no conflict at load).
    const store = tinyLmVariants(path.join(dir, 'store'), {
      'tiny-lm': { enablePrefixCaching: false, compute_nans_in_logits: false },
    });
    fs.mkdirSync(path.join(dir, 'logs'));
    server = await startTsserve({
      store,
      args: [
        '--metrics-profile',
        'vllm',
        '--metrics-mode',
        'prometheus',
        '--disable-system-metrics',
        '--enable-mfu-metrics',
      ],
      env: { VLLM_COMPUTE_NANS_IN_LOGITS: '1' },
      logDir: path.join(dir, 'logs'),
    });
  });

  after(() => {
    server?.kill();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it("should add one completion's estimated FLOPs and bytes, as computed from the model's shapes, and count no corrupted request", async () => {
    const L = '{model_name="tiny-lm",engine="0"}';
    const before = await scrape(server);
    expect(
      ['flops', 'read_bytes', 'write_bytes'].map((k) => sample(before, `vllm:estimated_${k}_per_gpu_total${L}`)),
    ).to.deep.equal([0, 0, 0]);
    const r = await openaiClient(server).completions.create({
      model: 'tiny-lm',
      prompt: 'the cost of a step',
      max_tokens: 5,
      temperature: 0,
      ...({ ignore_eos: true } as object),
    });
    const P = r.usage!.prompt_tokens;
    const N = r.usage!.completion_tokens;
    const d = D_MODEL;
    const layer = 3 * d * d + 3 * d + d * d + d + 2 * d * FFN_DIM + FFN_DIM + d + 4 * d;
    const head = d * VOCAB_SIZE + VOCAB_SIZE;
    const weights = 4 * (NUM_LAYERS * layer + head);
    const kv = 2 * NUM_LAYERS * NUM_HEADS * HEAD_DIM * 4;
    const attn = 4 * NUM_LAYERS * NUM_HEADS * HEAD_DIM;
    let flops = 2 * NUM_LAYERS * layer * P + 2 * head + attn * ((P * (P + 1)) / 2);
    let read = weights;
    for (let i = 1; i < N; i++) {
      flops += 2 * NUM_LAYERS * layer + 2 * head + attn * (P + i);
      read += weights + kv * (P + i - 1);
    }
    const write = kv * (P + N - 1) + 4 * VOCAB_SIZE * N;
    // The finishing step's message carries its stats too: once the finish is counted, so is its cost.
    const text = await until(
      async () => {
        const t = await scrape(server);
        return sample(t, `vllm:request_success_total{model_name="tiny-lm",engine="0",finished_reason="length"}`) === 1
          ? t
          : null;
      },
      { message: 'the completion counted' },
    );
    expect([
      N,
      ...['flops', 'read_bytes', 'write_bytes'].map((k) => sample(text, `vllm:estimated_${k}_per_gpu_total${L}`)),
    ]).to.deep.equal([5, flops, read, write]);
    expect(sample(text, `vllm:corrupted_requests_total${L}`)).to.equal(0);
  });
});
