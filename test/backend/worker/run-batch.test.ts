import { expect } from 'chai';
import { normalize } from '../../../backend/worker/load-handler.js';
import { runBatch } from '../../../backend/worker/run-batch.js';
import { makeRequestError } from '../../../backend/handlers/request-error.js';
import type { HandlerContext, HandlerRequest } from '../../../backend/handlers/types.js';

// runBatch only hands the context through to the handler; these handlers never touch it.
const ctx = {} as HandlerContext;
const reqs: HandlerRequest[] = [
  { requestId: 'a', body: 1 },
  { requestId: 'b', body: 2 },
];

describe('runBatch', () => {
  it('should run the stages in order and answer one response per request', async () => {
    const calls: string[] = [];
    const h = normalize(
      {
        preprocess: (r: HandlerRequest[]) => (calls.push('pre'), r.map((x) => x.body as number)),
        inference: async (b: number[]) => (calls.push('inf'), b.map((x) => x * 10)),
        postprocess: (o: number[]) => (calls.push('post'), o),
      },
      'm',
    );
    const out = await runBatch(h, reqs, ctx);
    expect(calls).to.deep.equal(['pre', 'inf', 'post']);
    expect(out.responses).to.deep.equal([
      { ok: true, body: 10 },
      { ok: true, body: 20 },
    ]);
    expect(out.predictionMs).to.be.within(0, out.handlerMs);
    expect(out.thrown).to.equal(undefined);
  });

  it('should answer 500 to all when the count of answers is wrong', async () => {
    const out = await runBatch(normalize({ handle: () => ['only one'] }, 'm'), reqs, ctx);
    const message = 'handler returned 1 answers for a batch of 2 (it must return one answer per request)';
    expect(out.responses).to.deep.equal([
      { ok: false, status: 500, message },
      { ok: false, status: 500, message },
    ]);
  });

  it('should answer a thrown request error with its status for the whole batch', async () => {
    const out = await runBatch(
      normalize(
        {
          handle: () => {
            throw makeRequestError('unsupported content', 415);
          },
        },
        'm',
      ),
      reqs,
      ctx,
    );
    expect(out.responses).to.deep.equal([
      { ok: false, status: 415, message: 'unsupported content' },
      { ok: false, status: 415, message: 'unsupported content' },
    ]);
  });

  it('should turn a plain Error in an answer slot into a 500 for that request only', async () => {
    const out = await runBatch(normalize({ handle: () => [new Error('row failed'), 'fine'] }, 'm'), reqs, ctx);
    expect(out.responses).to.deep.equal([
      { ok: false, status: 500, message: 'row failed' },
      { ok: true, body: 'fine' },
    ]);
  });
});

describe('normalize (handler module shapes)', () => {
  it('should accept handle, default function, default object, module function and stages', () => {
    const fn = (): unknown[] => [];
    expect(normalize({ handle: fn }, 'm').kind).to.equal('handle');
    expect(normalize({ default: fn }, 'm').kind).to.equal('handle');
    expect(normalize({ default: { handle: fn } }, 'm').kind).to.equal('handle');
    expect(normalize({ default: { inference: fn } }, 'm').kind).to.equal('staged');
    expect(normalize(fn, 'm').kind).to.equal('handle');
    expect(normalize({ inference: fn }, 'm').kind).to.equal('staged');
  });

  it('should keep initialize with a handle export', () => {
    const init = (): void => undefined;
    const h = normalize({ initialize: init, handle: (): unknown[] => [] }, 'm');
    expect(h.kind === 'handle' && typeof h.init).to.equal('function');
  });

  it('should refuse a module with nothing to call', () => {
    expect(() => normalize({ helper: 1 }, '/x/handler.js')).to.throw(
      'handler /x/handler.js exports neither handle() nor preprocess/inference/postprocess',
    );
    expect(() => normalize(42, '/x/handler.js')).to.throw('handler /x/handler.js exports nothing usable');
  });
});
