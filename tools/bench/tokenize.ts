/**
 * `npm run bench:tokenize` (tokenize_vs_bytes): the real tokenizer on GPT-2's files (as
 * tiny-lm-hf ships them) against the byte tokenizer, on the same text: docs/engine.md and
 * docs/openai.md with lines of accents, CJK, emoji and whitespace runs. Two JSON lines:
 *
 * - tokenize_vs_bytes: encode throughput, MB of UTF-8 per second, the real tokenizer
 *   (schema/text/model-tokenizer.ts through @huggingface/tokenizers) vs the byte tokenizer
 *   (backend/engine/tokenizer.ts). Reported, no goal: BPE is search, bytes are a copy.
 * - detokenize_per_token: µs per streamed token of the incremental detokenizer (vLLM's prefix /
 *   read offsets) over the text's ids, ours (a byte-level window decoded from each token's
 *   bytes) vs the same algorithm calling the library's decode per window. Goal: ours ≤ 5 µs.
 *
 * Rounds interleave ours and the baseline after a warm-up; medians are reported. BENCH_SMOKE=1
 * runs two short rounds on a slice of the text, prints the same lines and judges nothing.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ByteTokenizer } from '../../backend/engine/tokenizer.js';
import { HfTokenizer } from '../../schema/text/hf-tokenizer.js';
import { IncrementalDetokenizer } from '../../schema/text/incremental-detokenizer.js';
import { ModelTokenizer } from '../../schema/text/model-tokenizer.js';
import { GPT2_EOS_ID, gpt2TokenizerConfig, gpt2TokenizerJson } from '../models/gpt2-tokenizer.js';

const SMOKE = process.env.BENCH_SMOKE === '1';
const ROUNDS = SMOKE ? 2 : 7;
const GOAL_US = 5;
const ROOT = resolve(import.meta.dirname, '..', '..', '..');

const EXTRA = [
  'café naïve résumé façade Ångström — «guillemets» and “quotes”',
  '日本語のテキストと中文的句子，还有한국어 문장도 있습니다。',
  '🎉👍🏽 emoji 🤖 and 👨‍👩‍👧 families',
  'a   b\t\tc\n\n  d    \n        indented code',
];

function text(): string {
  const docs = ['engine.md', 'openai.md'].map((f) => readFileSync(join(ROOT, 'docs', f), 'utf8')).join('\n');
  const all = `${docs}\n${EXTRA.join('\n').repeat(20)}`;
  return SMOKE ? all.slice(0, 4000) : all;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** ms per call of `f`, over `reps` calls (a short call is repeated so the clock's grain does not count). */
function time(f: () => void, reps = 1): number {
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) f();
  return (performance.now() - t0) / reps;
}

/** Byte-tokenizer encodes per timing: one takes well under a millisecond. */
const BYTE_REPS = SMOKE ? 5 : 50;

function line(bench: string, ours: number, baseline: number, unit: string): void {
  const round = (x: number): number => Number(x.toFixed(x < 10 ? 3 : 1));
  process.stdout.write(
    `${JSON.stringify({ bench, ours: round(ours), baseline: round(baseline), unit, ratio: Number((ours / baseline).toFixed(3)) })}\n`,
  );
}

function main(): void {
  const json = gpt2TokenizerJson();
  const config = gpt2TokenizerConfig(1024);
  const tk = new ModelTokenizer({
    tokenizerJson: json,
    tokenizerConfig: config,
    specialTokensMap: {},
    chatTemplate: undefined,
  });
  const lib = new HfTokenizer(json, config);
  const bytes = new ByteTokenizer({ bosId: 256, eosId: 257, padId: 258, addBos: false });
  const t = text();
  const mb = Buffer.byteLength(t, 'utf8') / 1e6;
  // Warm-up: the BPE cache and the JIT see the text once.
  const ids = tk.encode(t);
  bytes.encode(t);
  const stream = (d: { push(id: number): string; end(): string }): void => {
    for (const id of ids) d.push(id);
    d.end();
  };
  const libDecoder = (): IncrementalDetokenizer =>
    new IncrementalDetokenizer(
      (w) => lib.decode(w),
      (id) => id === GPT2_EOS_ID,
    );
  stream(tk.streamDecoder());
  stream(libDecoder());
  const enc: number[] = [];
  const encBytes: number[] = [];
  const det: number[] = [];
  const detLib: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    enc.push(mb / (time(() => tk.encode(t)) / 1000));
    encBytes.push(mb / (time(() => bytes.encode(t), BYTE_REPS) / 1000));
    det.push((time(() => stream(tk.streamDecoder())) * 1000) / ids.length);
    detLib.push((time(() => stream(libDecoder())) * 1000) / ids.length);
  }
  line('tokenize_vs_bytes', median(enc), median(encBytes), 'MB/s');
  const perToken = median(det);
  line('detokenize_per_token', perToken, median(detLib), 'µs');
  process.stderr.write(
    `${ids.length} tokens, ${mb.toFixed(3)} MB; detokenize goal <= ${GOAL_US} µs a token: ${SMOKE ? 'not judged (BENCH_SMOKE)' : perToken <= GOAL_US ? 'met' : 'NOT met'}\n`,
  );
}

main();
