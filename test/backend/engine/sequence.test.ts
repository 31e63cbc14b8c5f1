import { expect } from 'chai';
import { prngFor, resolveSamplingParams } from '../../../backend/engine/sampling.js';
import { Sequence } from '../../../backend/engine/sequence.js';
import { stopRuleFor } from '../../../backend/engine/stopping.js';
import { StreamDecoder } from '../../../backend/engine/tokenizer.js';
import type { EngineConfig } from '../../../backend/engine/config.js';

const CFG = { eosTokenIds: [257], suppressTokenIds: [] } as unknown as EngineConfig;

/** The text chunks a sequence of `params` sends, one per appended token, then the rest at its finish. */
function chunks(params: Parameters<typeof resolveSamplingParams>[0], tokens: readonly number[]): string[] {
  const sp = resolveSamplingParams(params);
  const seq = new Sequence('r', 0, 0, [256], sp, prngFor(1), new StreamDecoder(), stopRuleFor(CFG, sp));
  const out: string[] = [];
  for (const t of tokens) {
    seq.append(t, 1024);
    out.push(seq.takeText());
  }
  seq.finish('length');
  out.push(seq.takeText());
  return out;
}

// 'a', then U+1F600 (4 UTF-8 bytes, 2 UTF-16 units), then 'b'.
const EMOJI_TOKENS = [0x61, 0xf0, 0x9f, 0x98, 0x80, 0x62];

describe('Sequence', () => {
  describe('takeText', () => {
    it('should never end a held-back chunk between the two halves of a surrogate pair (a stop string of 2 held 1 unit: "a\\ud83d" then "\\ude00")', () => {
      expect(chunks({ stop: ['xy'], max_tokens: 10 }, EMOJI_TOKENS)).to.deep.equal([
        '',
        '',
        '',
        '',
        'a',
        '\u{1F600}',
        'b',
      ]);
    });

    it('should send a character above U+FFFF whole when no stop string holds text back', () => {
      expect(chunks({ max_tokens: 10 }, EMOJI_TOKENS)).to.deep.equal(['a', '', '', '', '\u{1F600}', 'b', '']);
    });

    it('should hold back a whole pair when the stop string is longer', () => {
      expect(chunks({ stop: ['xyz'], max_tokens: 10 }, EMOJI_TOKENS)).to.deep.equal([
        '',
        '',
        '',
        '',
        'a',
        '',
        '\u{1F600}b',
      ]);
    });
  });
});
