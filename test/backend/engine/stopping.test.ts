import { expect } from 'chai';
import { RequestRejected } from '../../../backend/engine/admission.js';
import { decodeToGenWorkerMessage } from '../../../schema/engine-ipc.js';
import { fakeGreedy } from './fake-runner.js';
import { collect, drain, fakeEngine } from './harness.js';

const enc = (s: string): number[] => [256, ...Buffer.from(s, 'utf8')];
const greedy = { temperature: 0 };
const EOS = 257;

describe('Stopping (vLLM rules)', () => {
  it('should stop on EOS when the pad id equals the EOS id (pad is not banned)', async () => {
    const { engine } = fakeEngine({ padTokenId: EOS }, 8);
    engine.addRequest('e', 'abc', { ...greedy, max_tokens: 20 });
    const r = collect(await drain(engine)).get('e/0')!;
    expect(r).to.deep.include({ finishReason: 'stop', stopReason: undefined, numGenerationTokens: 5 });
    expect(r.tokens.slice(4)).to.deep.equal([EOS]);
  });

  it('should sample past EOS with ignore_eos and run exactly max_tokens', async () => {
    const { engine } = fakeEngine({}, 8);
    engine.addRequest('i', 'abc', { ...greedy, max_tokens: 20, ignore_eos: true });
    const r = collect(await drain(engine)).get('i/0')!;
    expect(r.finishReason).to.equal('length');
    expect(r.tokens.length).to.equal(20);
    // EOS is the argmax from the 5th token on, and is sampled, not banned.
    expect(r.tokens.slice(4)).to.deep.equal(new Array(16).fill(EOS));
  });

  it('should stop on any id of an EOS list and leave it out of the text', async () => {
    const ref = fakeGreedy(enc('list'), 10);
    const { engine } = fakeEngine({ eosTokenId: [EOS, ref[3]!] });
    engine.addRequest('l', 'list', { ...greedy, max_tokens: 10 });
    const r = collect(await drain(engine)).get('l/0')!;
    expect(r).to.deep.include({
      finishReason: 'stop',
      stopReason: undefined,
      tokens: ref.slice(0, 4),
      text: Buffer.from(ref.slice(0, 3)).toString(),
    });
  });

  it('should stop on a stop token id with the id as the stop reason, ignore_eos or not', async () => {
    const ref = fakeGreedy(enc('ids'), 10);
    const { engine } = fakeEngine();
    engine.addRequest('s', 'ids', { ...greedy, max_tokens: 10, stop_token_ids: [ref[2]!], ignore_eos: true });
    const r = collect(await drain(engine)).get('s/0')!;
    expect(r).to.deep.include({
      finishReason: 'stop',
      stopReason: ref[2],
      tokens: ref.slice(0, 3),
      text: Buffer.from(ref.slice(0, 2)).toString(),
    });
  });

  it('should ban EOS and stop ids until min_tokens, then stop on them', async () => {
    const { engine } = fakeEngine({}, 8);
    engine.addRequest('m', 'abc', { ...greedy, max_tokens: 20, min_tokens: 8 });
    const r = collect(await drain(engine)).get('m/0')!;
    expect(r.finishReason).to.equal('stop');
    expect(r.tokens.length).to.equal(9);
    expect(r.tokens.slice(0, 8)).to.not.include(EOS);
    expect(r.tokens[8]).to.equal(EOS);
  });

  it('should refuse a request whose stop_token_ids and min_tokens ban every id of the vocabulary, and only then', () => {
    const { engine } = fakeEngine();
    const all = Array.from({ length: 259 }, (_v, i) => i);
    const why =
      "stop_token_ids with the model's EOS and suppressed ids cover all 259 token ids, so nothing could be sampled before min_tokens (5); leave at least one id out";
    expect(() => engine.addRequest('all', 'a', { max_tokens: 5, min_tokens: 5, stop_token_ids: all })).to.throw(
      RequestRejected,
      why,
    );
    // EOS (257) is banned before min_tokens anyway: leaving it out of the list changes nothing.
    expect(() =>
      engine.addRequest('eos', 'a', { max_tokens: 5, min_tokens: 5, stop_token_ids: all.filter((t) => t !== 257) }),
    ).to.throw(RequestRejected, why);
    expect(engine.hasWork()).to.equal(false);
    // Without min_tokens the ids only stop the sequence; with one id left out it can be sampled.
    engine.addRequest('no-min', 'a', { ...greedy, max_tokens: 5, stop_token_ids: all });
    engine.addRequest('one-left', 'a', {
      ...greedy,
      max_tokens: 5,
      min_tokens: 5,
      stop_token_ids: all.filter((t) => t !== 97),
    });
    expect(engine.hasWork()).to.equal(true);
  });

  it('should refuse every request when the model suppresses its whole vocabulary', () => {
    const { engine } = fakeEngine({ suppressTokens: Array.from({ length: 259 }, (_v, i) => i) });
    expect(() => engine.addRequest('x', 'a', { max_tokens: 2 })).to.throw(
      RequestRejected,
      'the model suppresses every token of its 259-token vocabulary',
    );
  });

  it("should never sample the model's suppressTokens", async () => {
    const { engine } = fakeEngine({ suppressTokens: [EOS] }, 8);
    engine.addRequest('x', 'abc', { ...greedy, max_tokens: 12 });
    const r = collect(await drain(engine)).get('x/0')!;
    expect(r.finishReason).to.equal('length');
    expect(r.tokens).to.not.include(EOS);
  });

  it('should validate stop_token_ids and min_tokens in the add message', () => {
    expect(
      decodeToGenWorkerMessage({
        type: 'tsserve.gen.add',
        requestId: 'a',
        prompt: 'x',
        params: { stop_token_ids: [1, -1], min_tokens: -1 },
      }),
    ).to.deep.equal({
      ok: false,
      problems: ['params.stop_token_ids: must be a list of token ids', 'params.min_tokens: must be an integer >= 0'],
    });
    expect(
      decodeToGenWorkerMessage({
        type: 'tsserve.gen.add',
        requestId: 'a',
        prompt: 'x',
        params: { max_tokens: 2, min_tokens: 3 },
      }),
    ).to.deep.equal({
      ok: false,
      problems: ['params.min_tokens: must be <= max_tokens'],
    });
  });
});
