import { expect } from 'chai';
import { editDistance, nearest, parseFlags } from '../../../frontend/server/flags.js';
import type { FlagDef } from '../../../frontend/server/flags.js';

const DEFS: readonly FlagDef[] = [
  { flag: 'models', kind: 'list' },
  { flag: 'metrics-mode', kind: 'string' },
  { flag: 'force', kind: 'bool' },
];

describe('editDistance', () => {
  it('should count insertions, deletions and substitutions', () => {
    expect(editDistance('metric-mode', 'metrics-mode')).to.equal(1);
    expect(editDistance('fromat', 'format')).to.equal(2);
    expect(editDistance('', 'abc')).to.equal(3);
    expect(editDistance('same', 'same')).to.equal(0);
  });
});

describe('nearest', () => {
  it('should name a close flag and nothing for a far one', () => {
    expect(nearest('metric-mode', ['models', 'metrics-mode', 'force'])).to.equal('metrics-mode');
    expect(nearest('zzzzzz', ['models', 'metrics-mode', 'force'])).to.equal(null);
  });
});

describe('parseFlags', () => {
  it('should name the nearest known flag for an unknown one and not count its value as stray', () => {
    expect(parseFlags(['--metric-mode', 'tslog'], DEFS, 'tsserve start').problems).to.deep.equal([
      "unknown option '--metric-mode'; did you mean '--metrics-mode'?",
    ]);
    expect(parseFlags(['--zzzzzz=1'], DEFS, 'tsserve start').problems).to.deep.equal([
      "unknown option '--zzzzzz' (see tsserve start --help)",
    ]);
  });

  it('should take list values repeated, space-separated and comma-separated', () => {
    const r = parseFlags(['--models', 'a=x,b=y', 'c=z', '--force', '--models=d=w'], DEFS, 'tsserve start');
    expect(r.problems).to.deep.equal([]);
    expect(r.given.values.get('models')).to.deep.equal(['a=x', 'b=y', 'c=z', 'd=w']);
    expect(r.given.values.get('force')).to.deep.equal(['true']);
  });

  it('should report a missing value, a stray argument, and see -h as --help', () => {
    const r = parseFlags(['stray', '-h', '--metrics-mode'], DEFS, 'tsserve start');
    expect(r.problems).to.deep.equal(["unexpected argument 'stray'", '--metrics-mode needs a value']);
    expect(r.given.help).to.equal(true);
  });
});
