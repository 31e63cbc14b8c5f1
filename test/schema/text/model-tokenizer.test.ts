/**
 * The real tokenizer on GPT-2's files as tiny-lm-hf is generated with them
 * (tools/models/gpt2-tokenizer.ts): for a fixed corpus tsserve's ids equal the library's and
 * GPT-2's reference ids from gpt-3-encoder's own `encode`; the incremental detokenizer's deltas
 * joined equal the library's decode byte for byte, and never hold U+FFFD for a character whose
 * bytes span several tokens; logprobs' token text and bytes for BPE tokens.
 */
import { expect } from 'chai';
import { encode as gpt2Encode } from 'gpt-3-encoder';
import { HfTokenizer } from '../../../schema/text/hf-tokenizer.js';
import { IncrementalDetokenizer, MAX_PENDING_TOKENS } from '../../../schema/text/incremental-detokenizer.js';
import { ModelTokenizer } from '../../../schema/text/model-tokenizer.js';
import { CHATML_TEMPLATE, gpt2TokenizerConfig, gpt2TokenizerJson } from '../../../tools/models/gpt2-tokenizer.js';

/** ASCII, accents, CJK, emoji (with a skin-tone modifier), whitespace runs, contractions, numbers. */
const CORPUS: readonly string[] = [
  'Hello world',
  'The quick brown fox jumps over the lazy dog.',
  'café naïve résumé façade Ångström',
  '日本語のテキストと中文',
  '🎉👍🏽 emoji 🤖 and 👨‍👩‍👧',
  'a   b\t\tc\n\n  d    \n',
  "it's don't I'll we've",
  'x = 3.14159; y = 2e10 // 1234567890',
  '   leading and trailing   ',
];

/** Every delta of a stream decoder over `ids`, the final flush last. */
function stream(tk: ModelTokenizer, ids: readonly number[], context: readonly number[] = []): string[] {
  const d = tk.streamDecoder(context);
  return [...ids.map((id) => d.push(id)), d.end()];
}

describe('ModelTokenizer (GPT-2)', () => {
  let tk: ModelTokenizer;
  let lib: HfTokenizer;

  before(() => {
    const json = gpt2TokenizerJson();
    const config = gpt2TokenizerConfig(1024);
    tk = new ModelTokenizer({
      tokenizerJson: json,
      tokenizerConfig: config,
      specialTokensMap: {},
      chatTemplate: undefined,
    });
    lib = new HfTokenizer(json, config);
  });

  it("should encode the corpus to the library's ids and gpt-3-encoder's reference ids", () => {
    for (const text of CORPUS) {
      const ids = tk.encode(text);
      expect(ids, text).to.deep.equal(gpt2Encode(text));
      expect(ids, text).to.deep.equal(lib.encode(text));
    }
    expect(tk.encode('Hello world')).to.deep.equal([15496, 995]);
  });

  it('should read the sizes, specials and template of the files: 50257 ids, <|endoftext|> = 50256, no BOS added', () => {
    const withTemplate = new ModelTokenizer({
      tokenizerJson: gpt2TokenizerJson(),
      tokenizerConfig: gpt2TokenizerConfig(1024),
      specialTokensMap: {},
      chatTemplate: CHATML_TEMPLATE,
    });
    expect([tk.size, tk.byteLevel, tk.bosToken, tk.eosToken, tk.bosId, tk.eosId]).to.deep.equal([
      50257,
      true,
      '<|endoftext|>',
      '<|endoftext|>',
      50256,
      50256,
    ]);
    expect(withTemplate.chatTemplate).to.equal(CHATML_TEMPLATE);
    // A special token written in the text is the special id (as transformers parses it).
    expect(tk.encode('a<|endoftext|>b')).to.deep.equal([64, 50256, 65]);
  });

  it("should stream each corpus text's ids to exactly the library's decode, byte for byte", () => {
    for (const text of CORPUS) {
      const ids = tk.encode(text);
      const joined = stream(tk, ids).join('');
      expect(Buffer.from(joined, 'utf8').equals(Buffer.from(lib.decode(ids), 'utf8')), text).to.equal(true);
      expect(joined, text).to.equal(text);
    }
  });

  it('should emit a character split across tokens once, whole, never as U+FFFD', () => {
    // 🎉 is three GPT-2 tokens (its four bytes split 2+1+1 with the space before it); 👍🏽 spans more.
    const ids = tk.encode(' 🎉👍🏽');
    expect(ids).to.deep.equal([12520, 236, 231, 41840, 235, 8582, 237, 121]);
    const deltas = stream(tk, ids);
    expect(deltas).to.deep.equal(['', '', ' 🎉', '', '👍', '', '', '🏽', '']);
    expect(deltas.some((d) => d.includes('\uFFFD'))).to.equal(false);
  });

  it('should leave <|endoftext|> out of streamed text, as the non-streamed decode does', () => {
    const ids = [15496, 50256, 995];
    expect(stream(tk, ids)).to.deep.equal(['Hello', '', ' world', '']);
    expect(lib.decode(ids)).to.equal('Hello world');
  });

  it('should name BPE tokens for logprobs by their text, and a piece of a character by its bytes', () => {
    expect([tk.tokenText(995), [...tk.tokenBytes(995)]]).to.deep.equal([' world', [32, 119, 111, 114, 108, 100]]);
    expect([tk.tokenText(12520), [...tk.tokenBytes(12520)]]).to.deep.equal([
      'bytes:\\x20\\xf0\\x9f',
      [0x20, 0xf0, 0x9f],
    ]);
    expect([tk.tokenText(50256), [...tk.tokenBytes(50256)]]).to.deep.equal([
      '<|endoftext|>',
      [...Buffer.from('<|endoftext|>')],
    ]);
  });

  it('should bound a window that never completes a character: after 16 ids it emits what they decode to and starts afresh', () => {
    // 0x80 alone (a continuation byte) never starts a character: GPT-2's token for it is id 222.
    expect([...tk.tokenBytes(222)]).to.deep.equal([0x80]);
    const d = tk.streamDecoder() as IncrementalDetokenizer;
    const out: string[] = [];
    for (let i = 0; i < MAX_PENDING_TOKENS + 1; i++) out.push(d.push(222));
    expect(out.slice(0, MAX_PENDING_TOKENS - 1).every((s) => s === '')).to.equal(true);
    expect(out[MAX_PENDING_TOKENS - 1]).to.equal('\uFFFD'.repeat(MAX_PENDING_TOKENS));
    expect([d.forcedFlushes, out[MAX_PENDING_TOKENS], d.end()]).to.deep.equal([1, '', '\uFFFD']);
  });
});

describe('IncrementalDetokenizer', () => {
  it("should decode the first output in the prompt's context and emit only the text past it (a decoder that strips a leading space)", () => {
    // A SentencePiece-like decoder: ▁ is a space, and a leading space of the window is dropped.
    const pieces = ['▁Hello', '▁world', '!'];
    const decode = (ids: readonly number[]): string =>
      ids
        .map((i) => pieces[i]!)
        .join('')
        .replace(/▁/g, ' ')
        .replace(/^ /, '');
    const d = new IncrementalDetokenizer(decode, () => false, [0]);
    expect([d.push(1), d.push(2), d.end()]).to.deep.equal([' world', '!', '']);
    const cold = new IncrementalDetokenizer(decode, () => false);
    expect(cold.push(1)).to.equal('world');
  });
});
