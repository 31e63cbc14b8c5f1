import { expect } from 'chai';
import { topLevelKeyCounts } from '../../../frontend/http/json-keys.js';

describe('topLevelKeyCounts', () => {
  it('should count each top-level key as written, escaped spellings as one, and skip string values and nested keys', () => {
    const text =
      '{"url": "a:\\"b\\"", "\\u0075rl" : "c", "n": {"url": 1, "x": ["url", {"url": 2}]}, "s": "url:", "url":3}';
    expect([...topLevelKeyCounts(text)]).to.deep.equal([
      ['url', 3],
      ['n', 1],
      ['s', 1],
    ]);
  });

  it('should find no key in an empty object and in a top-level array', () => {
    expect([...topLevelKeyCounts('{}')]).to.deep.equal([]);
    expect([...topLevelKeyCounts('[{"url": 1}]')]).to.deep.equal([]);
  });
});
