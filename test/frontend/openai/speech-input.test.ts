import { expect } from 'chai';
import { speechInput } from '../../../frontend/openai/audio.js';
import { OpenAIError } from '../../../frontend/http/openai-errors.js';

function refusal(input: unknown): [number, string | null, string] | null {
  try {
    speechInput(input);
    return null;
  } catch (e) {
    if (e instanceof OpenAIError) return [e.status, e.param, e.message];
    throw e;
  }
}

const TOO_LONG: [number, string, string] = [400, 'input', 'input must be a string of 1 to 4096 characters'];

describe('speechInput', () => {
  it('should count characters, not UTF-16 units: 4096 emoji are taken (they were refused as over 4096 characters)', () => {
    const emoji = '\u{1F600}'.repeat(4096);
    expect([emoji.length, speechInput(emoji) === emoji]).to.deep.equal([8192, true]);
    expect(refusal(`${emoji}a`)).to.deep.equal(TOO_LONG);
  });

  it('should take 1 to 4096 characters and refuse the rest', () => {
    expect(speechInput('x'.repeat(4096))).to.equal('x'.repeat(4096));
    expect([refusal('x'.repeat(4097)), refusal(''), refusal(7), refusal(undefined)]).to.deep.equal([
      TOO_LONG,
      TOO_LONG,
      TOO_LONG,
      TOO_LONG,
    ]);
  });
});
