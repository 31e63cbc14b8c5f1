import { expect } from 'chai';
import { RequestRejected } from '../../../backend/engine/admission.js';
import { resolveEngineConfig } from '../../../backend/engine/config.js';
import { EngineCore } from '../../../backend/engine/engine-core.js';
import { ByteTokenizer } from '../../../backend/engine/tokenizer.js';
import { kvBudgetOfBlock, longestSequence } from '../../../schema/kv-capacity.js';
import { collect, drain, fakeEngine } from './harness.js';
import { FakeRunner } from './fake-runner.js';

const greedy = { temperature: 0 };

describe('admission (EngineCore.addRequest refuses what can never run)', () => {
  it('should reject prompts that can never run', () => {
    const { engine } = fakeEngine({ numBlocks: 4, blockSize: 4, rowGrowStep: 4 });
    expect(() => engine.addRequest('x', 'a'.repeat(1100), {})).to.throw(
      RequestRejected,
      'the prompt has 1101 tokens; this model accepts at most 1023 so one can be generated',
    );
    expect(() => engine.addRequest('y', 'abc', { max_tokens: 20 })).to.throw(
      RequestRejected,
      '24 tokens need 6 KV blocks; the pool has 4',
    );
    expect(() => engine.addRequest('z', [999], {})).to.throw(
      RequestRejected,
      'token id 999 is outside the vocabulary (0..258)',
    );
  });

  it('should refuse bad sampling params at add, as tsserve.gen.add does (LLM.generate took max_tokens 0 as 1 token, n 0 as no output, n 1.5 threw a TypeError)', async () => {
    const { engine } = fakeEngine();
    expect(() => engine.addRequest('a', 'abc', { max_tokens: 0 })).to.throw(
      RequestRejected,
      'invalid sampling params: params.max_tokens: must be an integer >= 1',
    );
    expect(() => engine.addRequest('b', 'abc', { n: 1.5, temperature: -1 } as never)).to.throw(
      RequestRejected,
      'invalid sampling params: params.n: must be an integer >= 1; params.temperature: must be a number >= 0',
    );
    expect(() => engine.addRequest('c', 'abc', { stop: 'b' } as never)).to.throw(
      RequestRejected,
      'invalid sampling params: params.stop: must be a list of non-empty strings',
    );
    expect(() => engine.addRequest('d', 'abc', { min_tokens: 3, max_tokens: 2 })).to.throw(
      RequestRejected,
      'invalid sampling params: params.min_tokens: must be <= max_tokens',
    );
    expect(engine.hasWork()).to.equal(false);
    engine.addRequest('a', 'abc', { ...greedy, max_tokens: 1 });
    expect([...collect(await drain(engine)).values()].map((r) => r.tokens.length)).to.deep.equal([1]);
  });

  it('should admit exactly the longest sequence schema/kv-capacity.ts computes (the frontend checks max_tokens with it) and refuse one token more', () => {
    const model = {
      vocabSize: 259,
      numLayers: 1,
      numHeads: 1,
      headDim: 1,
      bosTokenId: 256,
      eosTokenId: 257,
      padTokenId: 258,
      maxModelLen: 1024,
    };
    const cases: [Record<string, number>, number][] = [
      [{ numBlocks: 8, blockSize: 16 }, 128], // blocks and rows hold 128
      [{ numBlocks: 6, blockSize: 16 }, 64], // 96 row positions: a 128 row does not fit
      [{ kvCacheBytes: 4096 }, 256], // 512 positions split in halves
      [{ kvCacheBytes: 2048, numBlocks: 40, blockSize: 4 }, 64], // rows get 256 − 160 = 96
      [{ numBlocks: 256 }, 1024], // max_model_len first
    ];
    for (const [kv, longest] of cases) {
      const raw = { ...model, ...kv };
      const cfg = resolveEngineConfig(raw);
      const budget = kvBudgetOfBlock(raw);
      expect([budget.numBlocks, budget.numRowTokens, longestSequence(budget)]).to.deep.equal([
        cfg.numBlocks,
        cfg.numRowTokens,
        longest,
      ]);
      const engine = new EngineCore(
        cfg,
        new FakeRunner(cfg.numBlocks, cfg.blockSize),
        new ByteTokenizer({ bosId: 256, eosId: 257, padId: 258 }),
      );
      engine.addRequest('fits', 'abcdefghi', { max_tokens: longest - 10 });
      if (longest < 1024)
        expect(() => engine.addRequest('over', 'abcdefghi', { max_tokens: longest - 9 })).to.throw(RequestRejected);
    }
  });
});
