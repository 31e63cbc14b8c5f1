import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineCore } from '../../../backend/engine/engine-core.js';
import type { FastRunner } from '../../../backend/engine/fast-runner.js';
import { loadEngine, readModelDir } from '../../../backend/engine/load.js';
import { createSession } from '../../../backend/onnx/ort.js';
import type { OrtSession } from '../../../backend/onnx/ort.js';
import { collect, drain, totals } from './harness.js';
import { promptIds, referenceGreedy, writeModels } from './real-harness.js';

const greedy = { temperature: 0, ignore_eos: true };

describe('FastRunner rows and blocks (real tiny LM)', function () {
  let root: string;
  let dir: string;
  let ref: OrtSession;
  const engines: EngineCore[] = [];

  async function engine(overrides: Record<string, unknown> = {}): Promise<EngineCore> {
    const m = await readModelDir(dir);
    const e = await loadEngine({ dir, modelFile: m.modelFile, engine: m.engine, overrides });
    engines.push(e);
    return e;
  }

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'tsserve-fast-runner-'));
    dir = (await writeModels(root)).fast;
    ref = await createSession(join(dir, 'model.onnx'));
  });

  after(async () => {
    for (const e of engines) await e.runner.close();
    await ref?.release();
    rmSync(root, { recursive: true, force: true });
  });

  it('should serve blocks filled while decoding from the prefix cache with the same tokens', async () => {
    const e = await engine();
    const first = promptIds('Hello');
    e.addRequest('a', first, { ...greedy, max_tokens: 40 });
    const a = collect(await drain(e)).get('a/0')!;
    // The second prompt is the first one's whole sequence: blocks 0 and 1 were filled by decoding.
    const second = [...first, ...a.tokens];
    e.addRequest('b', second, { ...greedy, max_tokens: 6 });
    const s2 = await drain(e);
    expect(totals(s2)).to.deep.include({ queries: 46, hits: 32 });
    expect(collect(s2).get('b/0')!.tokens).to.deep.equal(await referenceGreedy(ref, second, 6, true));
  });

  it('should serve blocks filled by unaligned prefill chunks from the prefix cache with the same tokens', async () => {
    const e = await engine({ enableChunkedPrefill: true, prefillChunkSize: 7, maxNumBatchedTokens: 7 });
    const p = promptIds('Once upon a time, in a land far away, there lived');
    e.addRequest('a', p, { ...greedy, max_tokens: 3 });
    const a = collect(await drain(e)).get('a/0')!;
    e.addRequest('b', p, { ...greedy, max_tokens: 3 });
    const s2 = await drain(e);
    expect(totals(s2)).to.deep.include({ queries: p.length, hits: Math.floor((p.length - 1) / 16) * 16 });
    expect(collect(s2).get('b/0')!.tokens).to.deep.equal(a.tokens);
    expect(a.tokens).to.deep.equal(await referenceGreedy(ref, p, 3, true));
  });

  it('should give every sequence its own tokens while rows free and refill at different steps', async () => {
    const e = await engine({ maxNumSeqs: 3 });
    const texts = ['Hello', 'a', 'The quick brown fox', 'zz', 'tiny', 'Once upon a time', 'x', 'rows'];
    texts.forEach((t, i) => e.addRequest(`r${i}`, t, { ...greedy, max_tokens: 2 + ((i * 5) % 9) }));
    const res = collect(await drain(e));
    for (let i = 0; i < texts.length; i++) {
      expect(res.get(`r${i}/0`)!.tokens, texts[i]).to.deep.equal(
        await referenceGreedy(ref, promptIds(texts[i]!), 2 + ((i * 5) % 9), true),
      );
    }
  });

  it('should group rows by capacity so 31 short rows and one of 900 stay within the row budget', async () => {
    const e = await engine({ maxNumSeqs: 32 });
    const short = Array.from({ length: 31 }, (_, i) => promptIds(`short ${i}`));
    const long = [...promptIds('x'), ...Array.from({ length: 898 }, (_, i) => 97 + (i % 26))];
    short.forEach((p, i) => e.addRequest(`s${i}`, p, { ...greedy, max_tokens: 12 }));
    e.addRequest('long', long, { ...greedy, max_tokens: 2 });
    const runner = e.runner as FastRunner;
    const steps = [];
    const seen = new Set<string>();
    while (e.hasWork()) {
      steps.push(await e.step());
      expect(runner.capacity.positions).to.be.at.most(e.config.numRowTokens);
      seen.add(JSON.stringify(runner.capacity.groups.map((g) => [g.positions, g.live])));
    }
    // The long prompt's chunks grow its row 128 → 256 → 512 → 1024 while the short rows stay at
    // 64; emptied groups keep their buffers (within the row budget) for the next sequence.
    expect([...seen].filter((x) => x.startsWith('[[64,31],'))).to.deep.equal([
      '[[64,31],[128,1]]',
      '[[64,31],[128,0],[256,1]]',
      '[[64,31],[128,0],[256,0],[512,1]]',
      '[[64,31],[128,0],[256,0],[512,0],[1024,1]]',
      '[[64,31],[128,0],[256,0],[512,0],[1024,0]]',
    ]);
    const res = collect(steps);
    expect(res.get('s3/0')!.tokens).to.deep.equal(await referenceGreedy(ref, short[3]!, 12, true));
    expect(res.get('long/0')!.tokens).to.deep.equal(await referenceGreedy(ref, long, 2, true));
  });

  it('should give n=4 children of a 64-token prompt the reference tokens while computing its blocks once in the step', async () => {
    const e = await engine();
    const p = [...promptIds('Shared prefix! '), ...Array.from({ length: 48 }, (_, i) => 97 + ((i * 5) % 26))];
    expect(p.length).to.equal(64);
    e.addRequest('n4', p, { ...greedy, n: 4, max_tokens: 5 });
    const steps = await drain(e);
    expect(steps[0]!.numPromptTokens).to.equal(112);
    expect(totals(steps)).to.deep.include({ queries: 256, hits: 144 });
    const want = await referenceGreedy(ref, p, 5, true);
    const res = collect(steps);
    expect([0, 1, 2, 3].map((i) => res.get(`n4/${i}`)!.tokens)).to.deep.equal([want, want, want, want]);
  });
});
