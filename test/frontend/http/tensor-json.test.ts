import { expect } from 'chai';
import { nestedTensor, nestedText, tensorAnswerText } from '../../../frontend/http/tensor-json.js';
import { TENSOR_ANSWER } from '../../../schema/tensors.js';
import type { TensorAnswer } from '../../../schema/tensors.js';

const f32 = (...v: number[]) => new Uint8Array(Float32Array.from(v).buffer);

describe('tensors as nested JSON', () => {
  it("should read a nested array's shape and its elements row major, and name where a ragged one breaks", () => {
    expect(
      nestedTensor('x', [
        [1, 2, 3],
        [4, 5, 6],
      ]),
    ).to.deep.equal({ dims: [2, 3], values: [1, 2, 3, 4, 5, 6] });
    expect(nestedTensor('x', 7)).to.deep.equal({ dims: [], values: [7] });
    expect(nestedTensor('x', [[1, 2], [3]])).to.equal(
      "input 'x': not a rectangular array: [1] has 1 entries where [0] has 2 entries",
    );
    expect(
      nestedTensor('x', [
        [1, 2],
        [3, [4]],
      ]),
    ).to.equal("input 'x': not a rectangular array: [1][1] is an array where [0][0] is a value");
  });

  it('should write a tensor as nested arrays of its shape, a non-finite float as null, 64-bit integers whole', () => {
    expect(nestedText('float32', [2, 2], f32(1, 0.5, -2, NaN))).to.equal('[[1,0.5],[-2,null]]');
    expect(nestedText('float32', [3], f32(0.1, 2, 3))).to.equal('[0.10000000149011612,2,3]');
    expect(nestedText('int64', [1, 1, 2], new Uint8Array(BigInt64Array.of(2n ** 60n + 1n, -1n).buffer))).to.equal(
      '[[[1152921504606846977,-1]]]',
    );
    expect(nestedText('bool', [2], Uint8Array.of(1, 0))).to.equal('[true,false]');
    expect(nestedText('float32', [], f32(4))).to.equal('4');
    expect(nestedText('float32', [2, 0], new Uint8Array(0))).to.equal('[[],[]]');
  });

  it('should write float32 rows (one or two axes) exactly as the general path writes the same values as float64', () => {
    const values = [1, 0.5, -2, NaN, Infinity, -Infinity, -0, 1e-45, 3.4e38, 0.1, 1 / 3, 123456.789];
    const asF32 = Float32Array.from(values);
    const f32bytes = new Uint8Array(asF32.buffer);
    const f64bytes = new Uint8Array(Float64Array.from(asF32).buffer);
    const shapes = [[12], [1, 12], [12, 1], [3, 4], [2, 6]];
    expect(shapes.map((d) => nestedText('float32', d, f32bytes))).to.deep.equal(
      shapes.map((d) => nestedText('float64', d, f64bytes)),
    );
    expect(nestedText('float32', [2, 2], f32bytes.subarray(24, 40))).to.equal(
      '[[0,1.401298464324817e-45],[3.3999999521443642e+38,0.10000000149011612]]',
    );
  });

  it("should answer a one-output model with that output's arrays, a model of several with an object by name", () => {
    const one: TensorAnswer = {
      kind: TENSOR_ANSWER,
      outputs: [{ name: 'p', dtype: 'float32' as const, dims: [2] }],
      data: [f32(0.25, 0.75)],
    };
    expect(tensorAnswerText(one)).to.equal('[0.25,0.75]');
    const two: TensorAnswer = {
      kind: TENSOR_ANSWER,
      outputs: [...one.outputs, { name: 'n', dtype: 'int32' as const, dims: [] }],
      data: [...one.data, new Uint8Array(Int32Array.of(3).buffer)],
    };
    expect(tensorAnswerText(two)).to.equal('{"p":[0.25,0.75],"n":3}');
  });
});
