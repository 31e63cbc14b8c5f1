/**
 * A non-streamed answer's JSON, built choice by choice: each choice is rendered once it finishes
 * (so the route can drop its raw logprobs at once), and a body past PIECEWISE_CHARS is written in
 * pieces. The largest request the limits allow (64 prompts × n 16 × ~1,000 tokens × 20 logprobs)
 * renders ≈ 490 M characters: as one object tree and one string it took the frontend's heap to
 * ≈ 3 GB of its 4 GB and near V8's longest string, so two at once crashed the server.
 */
import type { Response } from 'express';

/** Bodies longer than this many characters go out in pieces (chunked) rather than as one string. */
export const PIECEWISE_CHARS = 8 * 1024 * 1024;

/** The rendered choices of one answer. */
export class AnswerBody {
  private readonly rendered: (string | undefined)[];
  private chars = 0;

  constructor(size: number) {
    this.rendered = new Array<string | undefined>(size).fill(undefined);
  }

  /** True once choice `index` is rendered. */
  has(index: number): boolean {
    return this.rendered[index] !== undefined;
  }

  /** Renders choice `index` (its final body). */
  set(index: number, choice: object): void {
    const s = JSON.stringify(choice);
    this.rendered[index] = s;
    this.chars += s.length;
  }

  /** The pieces of `{...head, choices: [...], usage}`, in that key order. */
  pieces(head: object, usage: object): string[] {
    const out = [`${JSON.stringify(head).slice(0, -1)},"choices":[`];
    this.rendered.forEach((s, i) => out.push(i === 0 ? (s ?? 'null') : `,${s ?? 'null'}`));
    out.push(`],"usage":${JSON.stringify(usage)}}`);
    return out;
  }

  /** Sends the answer: one string (with its Content-Length) when small, else piece by piece. */
  send(res: Response, head: object, usage: object): void {
    const pieces = this.pieces(head, usage);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    if (this.chars <= PIECEWISE_CHARS) {
      res.end(pieces.join(''));
      return;
    }
    for (const p of pieces) res.write(p);
    res.end();
  }
}
