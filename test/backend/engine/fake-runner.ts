/**
 * A fake ModelRunner for the engine's unit tests: logits are a deterministic function of the
 * whole token history, and "K/V" is the token id itself, kept per row and in a block store, so a
 * wrong prefix hit or a wrong row after preemption changes the outputs.
 */
import type { ModelSpec } from '../../../backend/engine/config.js';
import type { ModelRunner, RunItem, RunResult } from '../../../backend/engine/runner.js';

/** The fake model's dimensions: byte vocab + BOS 256, EOS 257, PAD 258. */
export const FAKE_SPEC: ModelSpec = Object.freeze({
  vocabSize: 259,
  numLayers: 1,
  numHeads: 1,
  headDim: 1,
  maxContext: 1024,
  bosId: 256,
  eosId: 257,
  padId: 258,
});

/** Logits after `history`: letters and space get pseudo-random scores, everything else −10. */
export function fakeLogits(history: readonly number[], eosAt = -1): Float32Array {
  let h = 0x811c9dc5;
  for (const t of history) h = Math.imul(h ^ (t + 1), 0x01000193);
  const out = new Float32Array(FAKE_SPEC.vocabSize).fill(-10);
  let s = h >>> 0;
  for (let v = 97; v <= 122; v++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[v] = (s / 4294967296) * 4;
  }
  s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
  out[32] = (s / 4294967296) * 4;
  if (eosAt >= 0 && history.length >= eosAt) out[FAKE_SPEC.eosId] = 100;
  return out;
}

/** Greedy continuation computed without any cache: the reference for the engine's outputs. */
export function fakeGreedy(prompt: readonly number[], maxTokens: number): number[] {
  const h = [...prompt];
  const out: number[] = [];
  for (let i = 0; i < maxTokens; i++) {
    const l = fakeLogits(h);
    let best = 0;
    for (let v = 1; v < l.length; v++) if (l[v]! > l[best]!) best = v;
    out.push(best);
    h.push(best);
  }
  return out;
}

/** Runner over a fake model; counts tokens computed and rows built from blocks. */
export class FakeRunner implements ModelRunner {
  readonly spec = FAKE_SPEC;
  readonly rows = new Map<number, number[]>();
  readonly blocks: Int32Array;
  computedTokens = 0;
  rowsFromBlocks = 0;
  runs = 0;

  constructor(
    numBlocks: number,
    private readonly blockSize: number,
    private readonly eosAt = -1,
  ) {
    this.blocks = new Int32Array(numBlocks * blockSize).fill(-1);
  }

  /** Sequences whose next run fails (each item is its own run, in plan order). */
  readonly failNext = new Set<number>();
  /** Sequences whose next logits are all NaN (a model that overflowed). */
  readonly nanNext = new Set<number>();
  /** Sequences whose next logits hold one NaN, at this id (the rest of the row as usual). */
  readonly nanAtNext = new Map<number, number>();

  async run(items: readonly RunItem[]): Promise<RunResult[]> {
    this.runs++;
    const out: RunResult[] = [];
    for (const it of items) {
      if (this.failNext.delete(it.seqId)) {
        this.rows.delete(it.seqId);
        out.push(new Error(`injected failure for seq ${it.seqId}`));
        continue;
      }
      let row = this.rows.get(it.seqId);
      if (row === undefined) {
        row = [];
        for (let p = 0; p < it.start; p++)
          row.push(
            this.blocks[it.blockTable[Math.floor(p / this.blockSize)]! * this.blockSize + (p % this.blockSize)]!,
          );
        if (it.start > 0) this.rowsFromBlocks++;
        this.rows.set(it.seqId, row);
      }
      if (row.length !== it.start)
        throw new Error(`seq ${it.seqId}: row has ${row.length} tokens, step starts at ${it.start}`);
      for (let p = it.start; p < it.start + it.count; p++) {
        // As onnxruntime's Gather does: one id outside the vocabulary fails the whole batched run.
        if (!(it.tokens[p]! >= 0 && it.tokens[p]! < FAKE_SPEC.vocabSize))
          throw new Error(`seq ${it.seqId}: token id ${it.tokens[p]} is outside the vocabulary`);
        row.push(it.tokens[p]!);
        this.blocks[it.blockTable[Math.floor(p / this.blockSize)]! * this.blockSize + (p % this.blockSize)] =
          it.tokens[p]!;
      }
      this.computedTokens += it.count;
      const nanAt = it.wantLogits ? this.nanAtNext.get(it.seqId) : undefined;
      this.nanAtNext.delete(it.seqId);
      const logits = !it.wantLogits
        ? null
        : this.nanNext.delete(it.seqId)
          ? new Float32Array(FAKE_SPEC.vocabSize).fill(NaN)
          : fakeLogits(row, this.eosAt);
      if (logits !== null && nanAt !== undefined) logits[nanAt] = NaN;
      out.push(logits);
    }
    return out;
  }

  release(seqId: number): void {
    this.rows.delete(seqId);
  }

  takeSessionMs(): number {
    return 0;
  }

  async close(): Promise<void> {}
}
