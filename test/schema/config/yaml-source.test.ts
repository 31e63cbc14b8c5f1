/** The js-yaml adapter: positions of keys and values, rebuilt from the parser's events. */
import { expect } from 'chai';
import type { DocPath, Locator } from '../../../schema/config/yaml-source';
import { parseYaml } from '../../../schema/config/yaml-source';

function locator(text: string): Locator {
  const r = parseYaml(text);
  if (!r.ok) throw new Error(r.reason);
  return r.locator;
}

const at = (l: Locator, p: DocPath): string => `${l.value(p).line}:${l.value(p).col}`;
const keyAt = (l: Locator, p: DocPath): string => `${l.key(p).line}:${l.key(p).col}`;

describe('parseYaml', () => {
  const text = [
    'dimensions:            # comment',
    '  - &level "Level"',
    'ts_metrics:',
    '  counter:',
    '    - name: A',
    '      "unit": Count',
    '      dimensions: [*level, "x"]',
    '      help:',
    '    - {name: B, unit: ms}',
    '',
  ].join('\n');
  const l = locator(text);

  it('should place values after blanks and comments, at anchors and aliases', () => {
    expect(at(l, ['dimensions'])).to.equal('2:3');
    expect(at(l, ['dimensions', 0])).to.equal('2:5');
    expect(at(l, ['ts_metrics', 'counter', 0])).to.equal('5:7');
    expect(at(l, ['ts_metrics', 'counter', 0, 'name'])).to.equal('5:13');
    expect(at(l, ['ts_metrics', 'counter', 0, 'dimensions', 0])).to.equal('7:20');
    expect(at(l, ['ts_metrics', 'counter', 0, 'dimensions', 1])).to.equal('7:28');
  });

  it('should place keys, quoted ones included', () => {
    expect(keyAt(l, ['ts_metrics'])).to.equal('3:1');
    expect(keyAt(l, ['ts_metrics', 'counter', 0, 'unit'])).to.equal('6:7');
    expect(keyAt(l, ['ts_metrics', 'counter', 1, 'unit'])).to.equal('9:17');
  });

  it('should fall back to the key for an empty value and to the nearest node for a missing path', () => {
    expect(at(l, ['ts_metrics', 'counter', 0, 'help'])).to.equal('8:7');
    expect(at(l, ['ts_metrics', 'counter', 0, 'nope'])).to.equal('5:7');
    expect(at(l, ['ts_metrics', 'gauge', 3])).to.equal('4:3');
  });

  it('should report a syntax error with its 1-based position', () => {
    const r = parseYaml('a: [1, 2\nb: 3\n');
    expect(r.ok).to.equal(false);
    if (!r.ok) expect([r.pos, r.alias]).to.deep.equal([{ line: 2, col: 1 }, null]);
  });

  it('should point an undefined alias at its star', () => {
    const r = parseYaml('x:\n  - [a, *nope]\n');
    expect(r.ok ? null : [r.pos, r.alias]).to.deep.equal([{ line: 2, col: 9 }, 'nope']);
  });

  it('should resolve merge keys and keep `yes` a string (YAML 1.2 core)', () => {
    const r = parseYaml('base: &b {unit: ms}\nm:\n  <<: *b\n  name: A\nflag: yes\n');
    expect(r.ok && r.value).to.deep.equal({ base: { unit: 'ms' }, m: { unit: 'ms', name: 'A' }, flag: 'yes' });
  });
});
