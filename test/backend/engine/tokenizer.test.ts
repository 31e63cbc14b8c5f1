import { expect } from 'chai';
import { ByteTokenizer } from '../../../backend/engine/tokenizer.js';

const tok = new ByteTokenizer({ bosId: 256, eosId: 257, padId: 258 });

describe('ByteTokenizer', () => {
  it('should encode UTF-8 bytes after BOS and decode them back, skipping specials', () => {
    expect(tok.encode('hé!')).to.deep.equal([256, 104, 195, 169, 33]);
    expect(new ByteTokenizer({ bosId: 256, eosId: 257, padId: 258, addBos: false }).encode('a')).to.deep.equal([97]);
    expect(tok.decode([256, 104, 195, 169, 33, 257, 258])).to.equal('hé!');
  });

  it('should stream multi-byte characters whole and mark invalid bytes with U+FFFD', () => {
    const d = tok.streamDecoder();
    const parts = [...Buffer.from('a€b', 'utf8')].map((b) => d.push(b));
    expect(parts).to.deep.equal(['a', '', '', '€', 'b']);
    const bad = tok.streamDecoder();
    expect([0x80, 0x61, 0xe2, 0x61, 257].map((b) => bad.push(b))).to.deep.equal(['\ufffd', 'a', '', '\ufffda', '']);
    const cut = tok.streamDecoder();
    expect([0xe2, 0x82].map((b) => cut.push(b)).join('') + cut.end()).to.equal('\ufffd');
  });
});
