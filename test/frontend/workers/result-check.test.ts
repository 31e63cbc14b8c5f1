import { expect } from 'chai';
import { checkResult } from '../../../frontend/workers/result-check.js';
import type { ResultMessage } from '../../../schema/worker-protocol.js';

/** A result as a worker (or a handler forging one with process.send) might send it. */
function result(fields: Record<string, unknown>): ResultMessage {
  return { type: 'tsserve.result', batchId: 1, ...fields } as unknown as ResultMessage;
}

describe('checkResult', () => {
  it('should pass a well-formed result through as it is', () => {
    const m = result({ handlerMs: 2.5, responses: [{ ok: true, body: [1] }, { ok: false, status: 400, message: 'bad' }] });
    expect(checkResult(m)).to.deep.equal({ result: m, problem: null });
    expect(checkResult(m).result).to.equal(m);
  });

  it('should make a result without responses answer every request 500 (regression: it threw in the batcher and ended the server)', () => {
    expect(checkResult(result({ handlerMs: 1 }))).to.deep.equal({
      result: { type: 'tsserve.result', batchId: 1, handlerMs: 1, responses: [] },
      problem: 'responses is not an array',
    });
  });

  it('should turn an entry that is not a response, or a status outside 400-599, into a 500 (regression: status 700 was the HTTP status)', () => {
    const checked = checkResult(result({ handlerMs: 'x', responses: [{ ok: false, status: 700, message: 'x' }, 7, { ok: false, status: 404.5, message: 42 }, { ok: true, body: null }, { ok: false, status: 404, message: 7 }] }));
    expect(checked).to.deep.equal({
      result: {
        type: 'tsserve.result', batchId: 1, handlerMs: 0,
        responses: [
          { ok: false, status: 500, message: 'x' },
          { ok: false, status: 500, message: 'the worker sent a malformed response for request 1' },
          { ok: false, status: 500, message: '42' },
          { ok: true, body: null },
          { ok: false, status: 404, message: '7' },
        ],
      },
      problem: 'response 0 has status 700, not an error status 400-599; response 1 is not {ok, ...}; response 2 has status 404.5, not an error status 400-599; response 4 has a message that is not a string; handlerMs x is not a duration',
    });
  });
});
