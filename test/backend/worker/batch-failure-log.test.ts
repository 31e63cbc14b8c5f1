import { expect } from 'chai';
import { BatchFailureLog, MAX_TRACKED_FAILURES } from '../../../backend/worker/batch-failure-log.js';

function harness(): { log: BatchFailureLog; lines: string[]; at: (ms: number) => void } {
  const lines: string[] = [];
  let now = 0;
  return {
    log: new BatchFailureLog(
      (l) => lines.push(l),
      () => now,
    ),
    lines,
    at: (ms) => {
      now = ms;
    },
  };
}

/** An Error whose stack is fixed, so the lines are exact. */
function err(message: string): Error {
  const e = new Error(message);
  e.stack = `Error: ${message}\n    at handler (model.js:1:1)`;
  return e;
}

describe('BatchFailureLog', () => {
  it('should log a failure with its stack the first time, then once a minute with how many batches were only answered', () => {
    const h = harness();
    for (let b = 1; b <= 5; b++) {
      h.at(b * 1000);
      h.log.report(b, err('asked to fail'));
    }
    h.at(61_000);
    h.log.report(6, err('asked to fail'));
    h.at(62_000);
    h.log.report(7, err('asked to fail'));
    h.at(130_000);
    h.log.report(8, err('asked to fail'));
    expect(h.lines).to.deep.equal([
      'batch 1 failed: Error: asked to fail\n    at handler (model.js:1:1)',
      'batch 6 failed: Error: asked to fail\n    at handler (model.js:1:1) (4 more batches failed like it in the last 60 s; their requests were answered with the error)',
      'batch 8 failed: Error: asked to fail\n    at handler (model.js:1:1) (1 more batch failed like it in the last 69 s; their requests were answered with the error)',
    ]);
  });

  it('should log each distinct failure the first time, and a thrown non-Error by its text', () => {
    const h = harness();
    h.log.report(1, err('a'));
    h.log.report(2, err('b'));
    h.log.report(3, err('a'));
    h.log.report(4, 'plain string');
    h.log.report(5, 'plain string');
    expect(h.lines).to.deep.equal([
      'batch 1 failed: Error: a\n    at handler (model.js:1:1)',
      'batch 2 failed: Error: b\n    at handler (model.js:1:1)',
      'batch 4 failed: plain string',
    ]);
  });

  it(`should track at most ${MAX_TRACKED_FAILURES} distinct failures, the rest sharing one budget`, () => {
    const h = harness();
    for (let i = 0; i < MAX_TRACKED_FAILURES + 5; i++) h.log.report(i, `failure ${i}`);
    expect(h.lines.length).to.equal(MAX_TRACKED_FAILURES + 1);
    expect(h.lines.at(-1)).to.equal(`batch ${MAX_TRACKED_FAILURES} failed: failure ${MAX_TRACKED_FAILURES}`);
  });
});
