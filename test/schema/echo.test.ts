import { expect } from 'chai';
import { MAX_ERROR_MESSAGE_CHARS, capMessage, echoList, echoName, echoNumber } from '../../schema/echo.js';

describe('schema/echo: bounded echoes of request input', () => {
  it('should keep a number of 40 characters whole and cut a longer one with how many were left out', () => {
    expect(echoNumber('1'.repeat(40))).to.equal('1'.repeat(40));
    expect(echoNumber('9'.repeat(900_001))).to.equal(`${'9'.repeat(40)}…(899961 more)`);
  });

  it('should list 16 items and count the rest', () => {
    expect(echoList([1, 2, 3])).to.equal('1, 2, 3');
    expect(echoList(Array.from({ length: 50_000 }, (_, i) => i))).to.equal(
      `${Array.from({ length: 16 }, (_, i) => i).join(', ')}, …(49984 more)`,
    );
  });

  it('should keep a name of 256 characters whole and cut a longer one to 80, never in half a UTF-16 pair', () => {
    expect(echoName('n'.repeat(256))).to.equal('n'.repeat(256));
    expect(echoName('x'.repeat(900_000))).to.equal(`${'x'.repeat(80)}…(899920 more)`);
    expect(echoName(`${'x'.repeat(79)}😀${'y'.repeat(300)}`)).to.equal(`${'x'.repeat(79)}…(302 more)`);
  });

  it('should cap a message at 1024 characters at most, suffix included, so a second cap leaves it as it is', () => {
    const once = capMessage(`m${'x'.repeat(900_000)}`);
    expect([once.length, once.endsWith('…(899001 more)'), capMessage(once) === once]).to.deep.equal([1014, true, true]);
    expect(capMessage('short')).to.equal('short');
    expect(MAX_ERROR_MESSAGE_CHARS).to.equal(1024);
  });
});
