import { expect } from 'chai';
import { QueryParams } from '../../../frontend/http/query-params.js';
import { MODEL_BOUNDS } from '../../../frontend/store/model-bounds.js';

/** Reads one integer (or boolean) parameter and returns what came back and the error. */
function int(
  query: Record<string, unknown>,
  key: string,
  bound = MODEL_BOUNDS.batchSize,
): [number | undefined, string | null] {
  const p = new QueryParams(query);
  return [p.int(key, bound), p.error];
}

describe('QueryParams', () => {
  it('should read plain decimal digits within the bound, and nothing for an absent or empty parameter', () => {
    expect(int({ batch_size: '8' }, 'batch_size')).to.deep.equal([8, null]);
    expect(int({ batch_size: '1024' }, 'batch_size')).to.deep.equal([1024, null]);
    expect(int({ batch_size: '' }, 'batch_size')).to.deep.equal([undefined, null]);
    expect(int({}, 'batch_size')).to.deep.equal([undefined, null]);
    expect(int({ response_timeout: '86400' }, 'response_timeout', MODEL_BOUNDS.responseTimeout)).to.deep.equal([
      86400,
      null,
    ]);
  });

  it('should refuse an exponent, a sign, a fraction and a value past the bound, naming the parameter and the bound', () => {
    expect(int({ batch_size: '99999999999999999999' }, 'batch_size')).to.deep.equal([
      undefined,
      "parameter batch_size must be an integer from 1 to 1024 (got '99999999999999999999')",
    ]);
    expect(int({ batch_size: '1e3' }, 'batch_size')).to.deep.equal([
      undefined,
      "parameter batch_size must be an integer from 1 to 1024 (got '1e3')",
    ]);
    expect(int({ batch_size: '0' }, 'batch_size')).to.deep.equal([
      undefined,
      "parameter batch_size must be an integer from 1 to 1024 (got '0')",
    ]);
    expect(int({ batch_size: '+4' }, 'batch_size')).to.deep.equal([
      undefined,
      "parameter batch_size must be an integer from 1 to 1024 (got '+4')",
    ]);
    expect(int({ batch_size: '4.0' }, 'batch_size')).to.deep.equal([
      undefined,
      "parameter batch_size must be an integer from 1 to 1024 (got '4.0')",
    ]);
    expect(int({ response_timeout: '3000000' }, 'response_timeout', MODEL_BOUNDS.responseTimeout)).to.deep.equal([
      undefined,
      "parameter response_timeout must be an integer from 1 to 86400 seconds (got '3000000')",
    ]);
    expect(int({ max_batch_delay: '60001' }, 'max_batch_delay', MODEL_BOUNDS.maxBatchDelay)).to.deep.equal([
      undefined,
      "parameter max_batch_delay must be an integer from 0 to 60000 ms (got '60001')",
    ]);
  });

  it('should refuse a single-valued parameter given twice', () => {
    const p = new QueryParams({ url: ['mlp', 'custom'] });
    expect([p.string('url'), p.error]).to.deep.equal([undefined, 'parameter url must be given once (got 2 values)']);
  });

  it('should take true or false in any case and refuse anything else', () => {
    const bool = (v: string | undefined, def: boolean): [boolean, string | null] => {
      const p = new QueryParams(v === undefined ? {} : { synchronous: v });
      return [p.bool('synchronous', def), p.error];
    };
    expect([bool('true', false), bool('FALSE', true), bool(undefined, true), bool(undefined, false)]).to.deep.equal([
      [true, null],
      [false, null],
      [true, null],
      [false, null],
    ]);
    expect(bool('maybe', true)).to.deep.equal([false, "parameter synchronous must be true or false (got 'maybe')"]);
    expect(bool('1', true)).to.deep.equal([false, "parameter synchronous must be true or false (got '1')"]);
  });

  it("should refuse a parameter the route does not take, naming it, what the route takes and a note on TorchServe's (regression: initial_worker=2 registered 1 worker without a word)", () => {
    const only = (query: Record<string, unknown>): string | null => {
      const p = new QueryParams(query);
      p.only('POST /models', ['url', 'initial_workers'], {
        handler: "the model directory's model-config.yaml sets it",
      });
      return p.error;
    };
    expect(only({ url: 'mlp', initial_workers: '2' })).to.equal(null);
    expect(only({ url: 'mlp', initial_worker: '2' })).to.equal(
      'parameter initial_worker is not one POST /models takes (it takes url, initial_workers)',
    );
    expect(only({ url: 'mlp', handler: 'x.py' })).to.equal(
      "parameter handler is not one POST /models takes: the model directory's model-config.yaml sets it",
    );
    // The first problem is kept: a later read returns nothing.
    const p = new QueryParams({ nope: '1', url: 'mlp' });
    p.only('POST /models', ['url']);
    expect([p.string('url'), p.error]).to.deep.equal([
      undefined,
      'parameter nope is not one POST /models takes (it takes url)',
    ]);
  });

  it('should keep the first problem and read nothing after it', () => {
    const p = new QueryParams({ batch_size: 'x', response_timeout: '1e23', url: 'mlp' });
    expect([
      p.int('batch_size', MODEL_BOUNDS.batchSize),
      p.int('response_timeout', MODEL_BOUNDS.responseTimeout),
      p.string('url'),
    ]).to.deep.equal([undefined, undefined, undefined]);
    expect(p.error).to.equal("parameter batch_size must be an integer from 1 to 1024 (got 'x')");
  });
});
