/** figureProblem: what CI's smoke pass accepts as a bench's figure line. */
import { expect } from 'chai';
import { figureProblem } from '../../../tools/bench/smoke-check.js';

describe('figureProblem', () => {
  it('should accept a figure with numbers, and with null where a ratio divides by zero', () => {
    expect(figureProblem('{"bench":"a","ours":1.5,"baseline":3,"unit":"ms","ratio":0.5}')).to.equal(null);
    expect(figureProblem('{"bench":"s","ours":1,"baseline":0,"unit":"share","ratio":null}')).to.equal(null);
  });

  it('should name what is wrong with a line that is not a figure', () => {
    expect(figureProblem('{"bench":"a",')).to.equal('not JSON');
    expect(figureProblem('[1]')).to.equal('not a JSON object');
    expect(figureProblem('{"ours":1,"baseline":1,"unit":"ms","ratio":1}')).to.equal('no "bench" name');
    expect(figureProblem('{"bench":"a","ours":1,"baseline":1,"ratio":1}')).to.equal('a: no "unit"');
    expect(figureProblem('{"bench":"a","ours":"1","baseline":1,"unit":"ms","ratio":1}')).to.equal(
      'a: "ours" is not a number',
    );
    expect(figureProblem('{"bench":"a","ours":1,"unit":"ms","ratio":1}')).to.equal('a: "baseline" is not a number');
  });
});
