import { expect } from 'chai';
import { decodeJsonTensor } from '../../../frontend/http/json-tensor.js';

const enc = (s: string): Buffer => Buffer.from(s, 'utf8');

/** What JSON.parse and a Float32Array store make of the same text. */
function reference(text: string): number[] {
  return Array.from(Float32Array.from(JSON.parse(text) as number[]));
}

function decoded(text: string): number[] | string {
  const r = decodeJsonTensor(enc(text), 1_000_000);
  return r.kind === 'tensor' ? Array.from(r.data) : r.kind;
}

describe('decodeJsonTensor', () => {
  it('should round every number exactly as JSON.parse then a Float32Array store', () => {
    const numbers = [
      '0',
      '-0',
      '1',
      '-1',
      '0.5',
      '0.17',
      '0.03',
      '1.05',
      '123456789012345',
      '1234567890123456789',
      '0.1234567890123456789',
      '1e3',
      '1E-3',
      '2.5e+2',
      '-7.25e-5',
      '3.4028234663852886e38',
      '3.4028235e38',
      '1e-46',
      '4.9e-324',
      '9007199254740993',
      '0.000001',
      '1.7976931348623157e-300',
      '12.345678e10',
      '6.02214076e23',
    ];
    const text = `[${numbers.join(', ')}]`;
    expect(decoded(text)).to.deep.equal(reference(text));
    for (let seed = 0; seed < 200; seed++) {
      const values = Array.from({ length: 50 }, (_v, i) => Math.sin(seed * 50 + i) * 10 ** ((i % 9) - 4));
      const t = JSON.stringify(values);
      expect(decoded(t)).to.deep.equal(reference(t));
    }
  });

  it('should take the {"data": [...]} and {"input": [...]} wrappers and surrounding white space', () => {
    expect(decoded(' {"data" : [1, 2.5]} \n')).to.deep.equal([1, 2.5]);
    expect(decoded('{"input":[3]}')).to.deep.equal([3]);
  });

  it('should leave every other form to the general JSON path', () => {
    for (const text of [
      '[]',
      '[1,"a"]',
      '[[1]]',
      '[1,2',
      '[01]',
      '[1.]',
      '[.5]',
      '[+1]',
      '[1e]',
      '[1] x',
      '{"data":[1],"x":2}',
      '{"pixels":[1]}',
      '"x"',
      '',
      'null',
      '[1,]',
      '{"d\\u0061ta":[1]}',
    ]) {
      expect([text, decoded(text)]).to.deep.equal([text, 'json']);
    }
  });

  it('should refuse a number that overflows float32, naming its index and text', () => {
    expect(decodeJsonTensor(enc('[0, 1e308]'), 10)).to.deep.equal({
      kind: 'error',
      message: 'element 1 (1e308) is not finite in float32 (largest magnitude 3.4028234663852886e38)',
    });
    expect(decodeJsonTensor(enc('[-3.5e38]'), 10)).to.deep.equal({
      kind: 'error',
      message: 'element 0 (-3.5e38) is not finite in float32 (largest magnitude 3.4028234663852886e38)',
    });
  });

  it('should refuse more numbers than maxElements', () => {
    expect(decodeJsonTensor(enc('[1,2,3]'), 2)).to.deep.equal({
      kind: 'error',
      message: 'JSON body has more than 2 elements (--max-json-elements)',
    });
    expect(decoded(JSON.stringify(Array(5000).fill(0.25)))).to.deep.equal(Array(5000).fill(0.25));
  });
});
