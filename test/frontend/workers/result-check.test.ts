import { expect } from 'chai';
import { checkResult } from '../../../frontend/workers/result-check.js';
import type { ResultMessage } from '../../../schema/worker-protocol.js';

/** A result as a worker (or a handler forging one with process.send) might send it. */
function result(fields: Record<string, unknown>): ResultMessage {
  return { type: 'tsserve.result', batchId: 1, ...fields } as unknown as ResultMessage;
}

describe('checkResult', () => {
  it('should pass a well-formed result through as it is', () => {
    const m = result({
      handlerMs: 2.5,
      responses: [
        { ok: true, body: [1] },
        { ok: false, status: 400, message: 'bad' },
      ],
    });
    expect(checkResult(m, 2, 'W-1')).to.deep.equal({ result: m, problem: null, extra: 0 });
    expect(checkResult(m, 2, 'W-1').result).to.equal(m);
  });

  it('should make a result without responses answer every request 500 naming the worker (regression: it threw in the batcher and ended the server)', () => {
    const error = {
      ok: false,
      status: 500,
      message: 'worker W-1 sent a malformed result: its responses are not a list',
    };
    expect(checkResult(result({ handlerMs: 1 }), 2, 'W-1')).to.deep.equal({
      result: { type: 'tsserve.result', batchId: 1, handlerMs: 1, responses: [error, error] },
      problem: 'responses is not an array',
      extra: 0,
    });
  });

  it("should answer every request 500 when there are fewer responses than requests (regression: the answers after a missing one could be another request's)", () => {
    const error = {
      ok: false,
      status: 500,
      message: 'worker W-1 sent 2 responses for a batch of 3 requests; they cannot be matched to the requests',
    };
    expect(
      checkResult(
        result({
          handlerMs: 1,
          responses: [
            { ok: true, body: 1 },
            { ok: true, body: 2 },
          ],
        }),
        3,
        'W-1',
      ),
    ).to.deep.equal({
      result: { type: 'tsserve.result', batchId: 1, handlerMs: 1, responses: [error, error, error] },
      problem: '2 responses for a batch of 3 requests',
      extra: 0,
    });
  });

  it("should drop responses beyond the batch's requests, count them and answer every request 500 (regression: extras were ignored silently)", () => {
    const error = {
      ok: false,
      status: 500,
      message: 'worker W-1 sent 4 responses for a batch of 1 requests; they cannot be matched to the requests',
    };
    const body = { ok: true, body: 'x' };
    expect(checkResult(result({ handlerMs: 1, responses: [body, body, body, body] }), 1, 'W-1')).to.deep.equal({
      result: { type: 'tsserve.result', batchId: 1, handlerMs: 1, responses: [error] },
      problem: '4 responses for a batch of 1 requests',
      extra: 3,
    });
  });

  it('should turn an entry that is not a response, or a status outside 400-599, into a 500 naming the worker (regression: status 700 was the HTTP status)', () => {
    const checked = checkResult(
      result({
        handlerMs: 'x',
        responses: [
          { ok: false, status: 700, message: 'x' },
          7,
          { ok: false, status: 404.5, message: 42 },
          { ok: true, body: null },
          { ok: false, status: 404, message: 7 },
        ],
      }),
      5,
      'W-1',
    );
    expect(checked).to.deep.equal({
      result: {
        type: 'tsserve.result',
        batchId: 1,
        handlerMs: 0,
        responses: [
          { ok: false, status: 500, message: 'worker W-1 sent an error with status 700, not 400-599: x' },
          { ok: false, status: 500, message: 'worker W-1 sent a malformed response for request 1 of its batch' },
          { ok: false, status: 500, message: 'worker W-1 sent an error with status 404.5, not 400-599: 42' },
          { ok: true, body: null },
          { ok: false, status: 404, message: '7' },
        ],
      },
      problem:
        'response 0 has status 700, not an error status 400-599; response 1 is not {ok, ...}; response 2 has status 404.5, not an error status 400-599; response 4 has a message that is not a string; handlerMs x is not a duration',
      extra: 0,
    });
  });
});
