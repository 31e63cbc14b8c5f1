/**
 * The engine with a real tokenizer (GPT-2's, as tiny-lm-hf ships it) over a scripted runner
 * that makes the model "say" a fixed text's ids greedily: the streamed text deltas joined equal
 * the library's decode of the ids byte for byte, no delta holds U+FFFD although several
 * characters span tokens, a text prompt is tokenized by the real tokenizer, and a stop string
 * spanning tokens (one of them a piece of a CJK character) cuts the text where it starts; a
 * window that hits its bound is counted in the engine's stats.
 */
import { expect } from 'chai';
import { resolveEngineConfig } from '../../../backend/engine/config.js';
import type { ModelSpec } from '../../../backend/engine/config.js';
import { EngineCore } from '../../../backend/engine/engine-core.js';
import type { ModelRunner, RunItem, RunResult } from '../../../backend/engine/runner.js';
import { ModelTokenizer } from '../../../schema/text/model-tokenizer.js';
import { gpt2TokenizerConfig, gpt2TokenizerJson } from '../../../tools/models/gpt2-tokenizer.js';
import { collect, drain } from './harness.js';

const SPEC: ModelSpec = Object.freeze({
  vocabSize: 50257,
  numLayers: 1,
  numHeads: 1,
  headDim: 1,
  maxContext: 1024,
  bosId: 50256,
  eosId: 50256,
  padId: 50256,
});

/** Logits that make output i be `script[i]` (then EOS), whatever the history. */
class ScriptedRunner implements ModelRunner {
  readonly spec = SPEC;
  constructor(
    private readonly promptLen: number,
    private readonly script: readonly number[],
  ) {}
  run(items: readonly RunItem[]): Promise<RunResult[]> {
    return Promise.resolve(
      items.map((it) => {
        if (!it.wantLogits) return null;
        const next = this.script[it.start + it.count - this.promptLen] ?? SPEC.eosId;
        const l = new Float32Array(SPEC.vocabSize).fill(-10);
        l[next] = 10;
        return l;
      }),
    );
  }
  release(): void {}
  takeSessionMs(): number {
    return 0;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('EngineCore with a real tokenizer', () => {
  let tk: ModelTokenizer;

  before(() => {
    tk = new ModelTokenizer({
      tokenizerJson: gpt2TokenizerJson(),
      tokenizerConfig: gpt2TokenizerConfig(1024),
      specialTokensMap: {},
      chatTemplate: undefined,
    });
  });

  async function say(
    text: string | readonly number[],
    params: Record<string, unknown> = {},
  ): Promise<{
    deltas: string[];
    ids: number[];
    prompt: number[];
    stopReason?: string | number;
    finish?: string;
    flushes: number;
  }> {
    const prompt = tk.encode('Say:');
    const script = typeof text === 'string' ? tk.encode(text) : text;
    const cfg = resolveEngineConfig(
      { ...SPEC, bosTokenId: 50256, eosTokenId: 50256, padTokenId: 50256 },
      {
        numBlocks: 64,
        addBos: false,
      },
    );
    const engine = new EngineCore(cfg, new ScriptedRunner(prompt.length, script), tk);
    engine.addRequest('r', 'Say:', { temperature: 0, max_tokens: script.length + 1, ...params });
    const steps = await drain(engine);
    const deltas = steps.flatMap((s) => s.outputs.map((o) => o.text));
    const r = collect(steps).get('r/0')!;
    const flushes = steps.reduce((n, st) => n + (st.stats?.detokenizerFlushes ?? 0), 0);
    return { deltas, ids: r.tokens, prompt, stopReason: r.stopReason, finish: r.finishReason, flushes };
  }

  it("should stream text whose deltas join to the library's decode byte for byte, none holding U+FFFD", async () => {
    const text = ' 🎉 party at 日本 café 👍🏽!';
    const { deltas, ids } = await say(text);
    expect(ids.slice(0, -1)).to.deep.equal(tk.encode(text));
    expect(ids[ids.length - 1]).to.equal(50256);
    const joined = deltas.join('');
    expect(Buffer.from(joined, 'utf8').equals(Buffer.from(tk.decode(ids), 'utf8'))).to.equal(true);
    expect(joined).to.equal(text);
    expect(deltas.filter((d) => d.includes('\uFFFD'))).to.deep.equal([]);
    // Characters spanning tokens waited for their last one: fewer non-empty deltas than tokens.
    expect(deltas.filter((d) => d !== '').length).to.be.below(ids.length);
  });

  it('should cut the text before a stop string that spans tokens and finish with it as the stop reason', async () => {
    const { deltas, stopReason, finish } = await say(' 🎉 party at 日本 café', { stop: ['at 日'] });
    expect([deltas.join(''), stopReason, finish]).to.deep.equal([' 🎉 party ', 'at 日', 'stop']);
  });

  it('should count a window that hit its bound in the stats (ts_detokenizer_flushes_total), once per hit', async () => {
    // GPT-2's id 222 is the lone byte 0x80, which completes no character: 17 of them hit the bound of 16 once.
    const { deltas, flushes } = await say(Array<number>(17).fill(222));
    expect(deltas.join('')).to.equal('\uFFFD'.repeat(17));
    expect(flushes).to.equal(1);
    const clean = await say(' 🎉 party');
    expect(clean.flushes).to.equal(0);
  });
});
