import { expect } from 'chai';
import { jsonBoundsProblem } from '../../../frontend/http/json-bounds.js';

const check = (text: string, depth: number, elements: number): string | null =>
  jsonBoundsProblem(Buffer.from(text), depth, elements);

describe('jsonBoundsProblem', () => {
  it('should accept a body at the depth limit and refuse one level deeper', () => {
    expect(check('[[[1]]]', 3, 10)).to.equal(null);
    expect(check('[[[[1]]]]', 3, 10)).to.equal('JSON body nests deeper than 3 levels (--max-json-depth)');
    expect(check('{"a":{"b":[{}]}}', 3, 10)).to.equal('JSON body nests deeper than 3 levels (--max-json-depth)');
  });

  it('should count array items and object members, nested ones too', () => {
    expect(check('[1,2,[3,4],{"a":5,"b":[]}]', 5, 8)).to.equal(null);
    expect(check('[1,2,[3,4],{"a":5,"b":[]}]', 5, 7)).to.equal(
      'JSON body has more than 7 elements (--max-json-elements)',
    );
    expect(check('[]', 5, 0)).to.equal(null);
    expect(check('{}', 5, 0)).to.equal(null);
    expect(check('[1]', 5, 0)).to.equal('JSON body has more than 0 elements (--max-json-elements)');
  });

  it('should ignore brackets, commas and escaped quotes inside strings', () => {
    expect(check('["[[[[,,,,", "a\\"[[[", "\\\\"]', 1, 3)).to.equal(null);
  });
});
