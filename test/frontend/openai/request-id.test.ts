/**
 * clientRequestId and engineRequestId: which X-Request-Id values are taken, the exact refusal
 * of the others, and engine ids that never repeat for one base.
 */
import { expect } from 'chai';
import { OpenAIError } from '../../../frontend/http/openai-errors.js';
import { clientRequestId, engineRequestId } from '../../../frontend/openai/request-id.js';

/** What clientRequestId says of a header value: the id, or the refusal's status and message. */
function read(value: string | undefined): string | undefined | [number, string] {
  try {
    return clientRequestId(value === undefined ? {} : { 'x-request-id': value });
  } catch (e) {
    if (e instanceof OpenAIError) return [e.status, e.message];
    throw e;
  }
}

const RULE = 'X-Request-Id must be 1 to 128 visible ASCII characters (! to ~)';

describe('clientRequestId', () => {
  it('should take an id of visible ASCII up to 128 characters as it is, and none when the header is absent', () => {
    expect([read(undefined), read('0f3c-Ab_9.~!'), read('x'.repeat(128))]).to.deep.equal([
      undefined,
      '0f3c-Ab_9.~!',
      'x'.repeat(128),
    ]);
  });

  it('should refuse with a 400 naming the header and what is wrong: empty, too long, a control, a space of a repeated header', () => {
    expect([read(''), read('x'.repeat(1000)), read('a\u0007b'), read('a, b')]).to.deep.equal([
      [400, `${RULE}; it is empty`],
      [400, `${RULE}; it has 1000`],
      [400, `${RULE}; character 2 is U+0007`],
      [400, `${RULE}; character 3 is U+0020`],
    ]);
  });
});

describe('engineRequestId', () => {
  it('should give a new id under the base at each call', () => {
    const ids = [engineRequestId('same'), engineRequestId('same')];
    expect(
      ids.map((id) => id.replace(/^same-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'same-<uuid>')),
    ).to.deep.equal(['same-<uuid>', 'same-<uuid>']);
    expect(ids[0]).to.not.equal(ids[1]);
  });
});
