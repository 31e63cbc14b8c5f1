/** The repo's metrics.yaml help texts never repeat the unit, which the exposition already adds (`(unit: ms)`). */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..', '..');

describe('metrics.yaml help texts', () => {
  it('should not say "in seconds", "in milliseconds", "in percent" and the like: HELP ends with "(unit: …)" already', () => {
    for (const file of ['metrics.yaml', path.join('examples', 'custom-metrics', 'metrics.yaml')]) {
      const repeats = fs
        .readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .map((line, i) => `${file}:${i + 1}: ${line.trim()}`)
        .filter((l) =>
          /help:.*\bin (seconds|milliseconds|microseconds|nanoseconds|megabytes|gigabytes|kilobytes|bytes|percent)\b/i.test(
            l,
          ),
        );
      expect(repeats).to.deep.equal([]);
    }
  });
});
