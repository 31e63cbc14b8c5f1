/**
 * vLLM-Omni's catalog in the vLLM profile: a REAL `tsserve start --metrics-profile vllm` serving
 * the tiny-omni pipeline answers two spoken requests; /metrics names the pipeline families as
 * vLLM-Omni does (`vllm_omni:*`, none of ours), counts the requests, their prompt and generated
 * tokens exactly as the client's usage said, and uses Omni's bucket lists (RTF with 0.9 and
 * 1.25 around the 1.0 line, transfer bytes up to 256 MiB).
 */
import { expect } from 'chai';
import type OpenAI from 'openai';
import { Scrape, delta } from './generation-helpers.js';
import { sample, scrape } from './harness.js';
import { servedOmni, spoken } from './pipeline-helpers.js';

const M = { model_name: 'tiny-omni' };

describe('vLLM-Omni names in the vLLM profile (real tsserve start --metrics-profile vllm)', function () {
  this.timeout(120_000);
  const omni = servedOmni('vllm-omni-profile', ['--metrics-profile', 'vllm', '--metrics-mode', 'prometheus']);

  it('should count two spoken requests and their exact usage in vllm_omni: families, and expose no ts_omni_ name', async () => {
    const before = await Scrape.of(omni.server);
    const answers: OpenAI.Chat.ChatCompletion[] = [];
    for (const text of ['say one', 'say two'])
      answers.push(
        await omni.client.chat.completions.create(
          spoken('tiny-omni', text, 4, 'wav', false) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
        ),
      );
    const after = await Scrape.of(omni.server);
    const usage = (k: 'prompt_tokens' | 'completion_tokens'): number => answers.reduce((n, a) => n + a.usage![k], 0);
    expect({
      success: delta(before, after, 'vllm_omni:requests_success_total', { ...M, finished_reason: 'length' }),
      e2e: delta(before, after, 'vllm_omni:e2e_request_latency_s_count', M),
      prompt: delta(before, after, 'vllm_omni:prompt_tokens_total', M),
      generated: delta(before, after, 'vllm_omni:generation_tokens_total', M),
      running: after.get('vllm_omni:num_requests_running', M),
    }).to.deep.equal({ success: 2, e2e: 2, prompt: usage('prompt_tokens'), generated: 8, running: 0 });
    expect(usage('completion_tokens')).to.equal(8);
    const text = await scrape(omni.server);
    expect(text).to.not.match(/^ts_omni_/m);
  });

  it('should hold one request in flight on one replica of each stage while it streams, and none once it ended', async () => {
    const series = (stage: string): string =>
      `vllm_omni:stage_inflight_requests{model_name="tiny-omni",stage="${stage}",replica="0"}`;
    const stream = await omni.client.chat.completions.create(
      spoken('tiny-omni', 'hold on', 200, 'pcm16', true) as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    let during: (number | null)[] | null = null;
    for await (const c of stream) {
      const audio = (c.choices[0]?.delta as { audio?: { data?: string } } | undefined)?.audio;
      // At the first audio chunk the request is bound to both stages (200 tokens: 50 chunks to go).
      if (during === null && audio?.data !== undefined) {
        const t = await scrape(omni.server);
        during = [sample(t, series('thinker')), sample(t, series('code2wav'))];
      }
    }
    const t = await scrape(omni.server);
    expect({ during, after: [sample(t, series('thinker')), sample(t, series('code2wav'))] }).to.deep.equal({
      during: [1, 1],
      after: [0, 0],
    });
  });

  it("should use vLLM-Omni's bucket lists: RTF with 0.9 and 1.25, transfer bytes up to 256 MiB", async () => {
    await omni.client.chat.completions.create(
      spoken('tiny-omni', 'buckets', 4, 'wav', false) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
    );
    const text = await scrape(omni.server);
    // The le values of the first series of a histogram, in exposition order.
    const les = (family: string): string[] => {
      const rows = text
        .split('\n')
        .filter((l) => l.startsWith(`${family}_bucket{`))
        .map((l) => {
          const labels = l.slice(l.indexOf('{') + 1, l.lastIndexOf('}'));
          return { le: /le="([^"]+)"/.exec(labels)![1]!, rest: labels.replace(/,?le="[^"]+"/, '') };
        });
      return rows.filter((r) => r.rest === rows[0]?.rest).map((r) => r.le);
    };
    expect(les('vllm_omni:audio_rtf')).to.deep.equal([
      '0.1',
      '0.25',
      '0.5',
      '0.75',
      '0.9',
      '1',
      '1.25',
      '1.5',
      '2',
      '5',
      '10',
      '+Inf',
    ]);
    expect(les('vllm_omni:transfer_size_bytes').slice(-3)).to.deep.equal(['67108864', '268435456', '+Inf']);
  });
});
