/** Bucket presets, unit classification, and the schema's mirror of the preset names. */
import { expect } from 'chai';
import { BUCKET_PRESET_NAMES, BUCKET_PRESETS, presetForUnit } from '../../../schema/config/presets.js';
import { METRICS_SCHEMA } from '../../../schema/config/schema-check.js';
import { getAt } from '../../../schema/config/doc.js';

describe('presetForUnit', () => {
  it('should map each unit spelling to its preset', () => {
    const units = [
      'ms',
      'Milliseconds',
      'us',
      'Microseconds',
      's',
      'Seconds',
      'Percent',
      '%',
      'Ratio',
      'Bytes',
      'kB',
      'Megabytes',
      'GB',
      'Count',
      'count',
      'CallCount',
      'Tokens',
      'Widgets',
    ];
    expect(units.map(presetForUnit)).to.deep.equal([
      'latency_ms',
      'latency_ms',
      'latency_us',
      'latency_us',
      'latency_s',
      'latency_s',
      'percent',
      'percent',
      'ratio',
      'bytes',
      'count_1_2_5',
      'count_1_2_5',
      'count_1_2_5',
      'count_1_2_5',
      'count_1_2_5',
      'count_1_2_5',
      'count_1_2_5',
      'generic',
    ]);
  });
});

describe('BUCKET_PRESETS', () => {
  it('should hold strictly increasing, finite lists', () => {
    for (const [name, list] of Object.entries(BUCKET_PRESETS)) {
      const ok = list.every((v, i) => Number.isFinite(v) && (i === 0 || v > (list[i - 1] as number)));
      expect(ok, name).to.equal(true);
    }
  });

  it('should be mirrored exactly by the enum in schema/metrics.schema.json', () => {
    const anyOf = getAt(METRICS_SCHEMA, [
      'definitions',
      'histogramMetric',
      'properties',
      'buckets',
      'anyOf',
      1,
      'enum',
    ]);
    expect(anyOf).to.deep.equal(BUCKET_PRESET_NAMES);
  });
});
