/**
 * Property tests of the metrics.yaml loader: whatever text it is given, `parseMetricsConfig`
 * answers a config or problems placed at a line and column of the file, and never throws.
 */
import { expect } from 'chai';
import * as fc from 'fast-check';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseMetricsConfig } from '../../schema/config/load.js';
import type { LoadResult } from '../../schema/types.js';
import { fuzzSettings } from './fuzz-settings.js';

const REPO_YAML = fs.readFileSync(path.resolve(import.meta.dirname, '..', '..', '..', 'metrics.yaml'), 'utf8');
const LINES = REPO_YAML.split('\n');

/** True when the result is a config, or problems each at a real position with a message. */
function wellFormed(r: LoadResult, text: string): boolean {
  if (r.ok) return true;
  const lines = text.split('\n').length;
  return (
    r.problems.length > 0 &&
    r.problems.every((p) => p.line >= 1 && p.line <= lines + 1 && p.col >= 1 && p.message.length > 0)
  );
}

/** A line of YAML-ish text: keys, lists, anchors and aliases, tags, quotes. */
const yamlLine = fc.array(
  fc.constantFrom(
    'model_metrics:',
    'ts_metrics:',
    '  counter:',
    '  gauge:',
    '  histogram:',
    '    - name: ',
    '      unit: ',
    '      dimensions: ',
    '      buckets: ',
    '[',
    ']',
    '{',
    '}',
    ', ',
    '&a ',
    '*a',
    '!!str ',
    '"',
    "'",
    '- ',
    ': ',
    '#',
    'limits:',
    '  max_series_per_metric: ',
    '  max_dimensions_per_metric: ',
    'mode: ',
    'Count',
    'ModelName',
    '1e308',
    '-1',
    'null',
    '~',
    '\t',
    '\\u0000',
  ),
  { maxLength: 12 },
);

describe('fuzz: the metrics.yaml loader', () => {
  it('should answer any text with a config or positioned problems, never a throw', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (text) => wellFormed(parseMetricsConfig(text, 'f.yaml'), text)),
      fuzzSettings(),
    );
  });

  it('should answer YAML-shaped text built from the format’s own tokens with a config or positioned problems', () => {
    fc.assert(
      fc.property(fc.array(yamlLine, { maxLength: 30 }), (lines) => {
        const text = lines.map((l) => l.join('')).join('\n');
        return wellFormed(parseMetricsConfig(text, 'f.yaml'), text);
      }),
      fuzzSettings(),
    );
  });

  it('should answer the repo metrics.yaml with lines deleted, repeated or cut with a config or positioned problems', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ at: fc.nat(LINES.length - 1), op: fc.constantFrom('drop', 'repeat', 'cut'), n: fc.nat(40) }),
          { minLength: 1, maxLength: 6 },
        ),
        (edits) => {
          const lines = LINES.slice();
          for (const e of edits) {
            const at = e.at % lines.length;
            if (e.op === 'drop') lines.splice(at, 1);
            else if (e.op === 'repeat') lines.splice(at, 0, lines[at]!);
            else lines[at] = lines[at]!.slice(0, e.n);
          }
          const text = lines.join('\n');
          return wellFormed(parseMetricsConfig(text, 'metrics.yaml'), text);
        },
      ),
      fuzzSettings(60),
    );
  });

  it('should answer any JSON value (YAML is a superset of JSON) with a config or positioned problems', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (v) => {
        const text = JSON.stringify(v);
        return wellFormed(parseMetricsConfig(text, 'f.yaml'), text);
      }),
      fuzzSettings(),
    );
  });

  it('should still load the repo metrics.yaml unchanged (the properties above start from a valid file)', () => {
    expect(parseMetricsConfig(REPO_YAML, 'metrics.yaml').ok).to.equal(true);
  });
});
