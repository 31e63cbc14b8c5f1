import { expect } from 'chai';
import type { Response } from 'express';
import { AnswerBody, PIECEWISE_CHARS } from '../../../frontend/openai/answer-body.js';

/** A Response that records what is written. */
function recorder(): { res: Response; writes: string[]; ended: string[]; headers: Record<string, string> } {
  const writes: string[] = [];
  const ended: string[] = [];
  const headers: Record<string, string> = {};
  const res = {
    setHeader: (k: string, v: string) => {
      headers[k] = v;
    },
    write: (s: string) => {
      writes.push(s);
      return true;
    },
    end: (s?: string) => {
      ended.push(s ?? '');
    },
  } as unknown as Response;
  return { res, writes, ended, headers };
}

const HEAD = { id: 'cmpl-1', object: 'text_completion', created: 7, model: 'm' };
const USAGE = { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 };

describe('AnswerBody', () => {
  it("should send a small answer as one string equal to the whole object's JSON, choices in index order whatever the finish order", () => {
    const b = new AnswerBody(2);
    b.set(1, { index: 1, text: 'b' });
    expect([b.has(0), b.has(1)]).to.deep.equal([false, true]);
    b.set(0, { index: 0, text: 'a\u00e9' });
    const r = recorder();
    b.send(r.res, HEAD, USAGE);
    const whole = JSON.stringify({
      ...HEAD,
      choices: [
        { index: 0, text: 'a\u00e9' },
        { index: 1, text: 'b' },
      ],
      usage: USAGE,
    });
    expect([r.writes, r.ended, r.headers]).to.deep.equal([
      [],
      [whole],
      { 'Content-Type': 'application/json; charset=utf-8' },
    ]);
  });

  it('should write an answer past PIECEWISE_CHARS in pieces, never as one string (the largest allowed request rendered ≈ 490 M characters at once)', () => {
    const b = new AnswerBody(3);
    const big = 'x'.repeat(PIECEWISE_CHARS / 2);
    for (let i = 0; i < 3; i++) b.set(i, { index: i, text: big });
    const r = recorder();
    b.send(r.res, HEAD, USAGE);
    expect(r.writes.length).to.equal(5);
    expect(r.ended).to.deep.equal(['']);
    expect(r.writes.join('')).to.equal(
      JSON.stringify({ ...HEAD, choices: [0, 1, 2].map((index) => ({ index, text: big })), usage: USAGE }),
    );
  });
});
