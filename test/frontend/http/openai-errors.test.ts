import { expect } from 'chai';
import { errorBody, errorType } from '../../../frontend/http/openai-errors.js';

describe('errorType', () => {
  it('should call every client error but 404 an invalid_request_error (408 and 415 were server_error)', () => {
    const statuses = [400, 401, 404, 408, 413, 415, 429, 500, 503];
    expect(statuses.map((s) => [s, errorType(s)])).to.deep.equal([
      [400, 'invalid_request_error'],
      [401, 'invalid_request_error'],
      [404, 'not_found_error'],
      [408, 'invalid_request_error'],
      [413, 'invalid_request_error'],
      [415, 'invalid_request_error'],
      [429, 'invalid_request_error'],
      [500, 'server_error'],
      [503, 'service_unavailable_error'],
    ]);
  });

  it("should build OpenAI's error body with that type", () => {
    expect(errorBody(408, 'request body timed out')).to.deep.equal({
      error: { message: 'request body timed out', type: 'invalid_request_error', param: null, code: null },
    });
  });
});
