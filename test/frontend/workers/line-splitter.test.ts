import { expect } from 'chai';
import { LineSplitter, MAX_WORKER_LINE_CHARS } from '../../../frontend/workers/line-splitter.js';

/** The lines a splitter bounded to `max` emits for `chunks`, then its end. */
function split(chunks: readonly string[], max?: number): string[] {
  const out: string[] = [];
  const s = new LineSplitter((l) => out.push(l), max);
  for (const c of chunks) s.push(c);
  s.end();
  return out;
}

describe('LineSplitter', () => {
  it('should emit each line once, across chunks, empty lines included, and the last one without a newline at the end', () => {
    expect(split(['a\nb', 'c\n\nd', 'e'])).to.deep.equal(['a', 'bc', '', 'de']);
    expect(split(['x\n'])).to.deep.equal(['x']);
    expect(split([])).to.deep.equal([]);
  });

  it('should keep the first max characters of a longer line and say how many it dropped (regression: a 32 MB handler line was held whole and logged as one record)', () => {
    expect(split(['abcdefgh', 'ij\nok\n', 'xyz'], 4)).to.deep.equal([
      'abcd… (6 more characters dropped: a worker log line is kept to 4)',
      'ok',
      'xyz',
    ]);
  });

  it('should hand emit the number of characters cut from each line, 0 for a whole one (the worker counts log_line_truncated with it)', () => {
    const out: [string, number][] = [];
    const s = new LineSplitter((l, dropped) => out.push([l, dropped]), 4);
    s.push('abcdefgh\nok\nxyz12');
    s.end();
    expect(out).to.deep.equal([
      ['abcd… (4 more characters dropped: a worker log line is kept to 4)', 4],
      ['ok', 0],
      ['xyz1… (1 more characters dropped: a worker log line is kept to 4)', 1],
    ]);
  });

  it('should hold at most max characters of a line that never ends (progress written with \\r) however much arrives', () => {
    const s = new LineSplitter(() => undefined, 8);
    for (let i = 0; i < 10_000; i++) s.push('42%\r');
    const held = (s as unknown as { kept: string[] }).kept.join('');
    expect(held).to.equal('42%\r42%\r');
  });

  it('should bound lines at 64 KiB by default', () => {
    const out = split(['y'.repeat(MAX_WORKER_LINE_CHARS + 10) + '\n']);
    expect([MAX_WORKER_LINE_CHARS, out.length, out[0]!.length]).to.deep.equal([
      65_536,
      1,
      65_536 + '… (10 more characters dropped: a worker log line is kept to 65536)'.length,
    ]);
  });
});
