/**
 * Fixed: a histogram a worker auto-detected got prom-client's default buckets (0.005 … 10), so a
 * millisecond metric put almost every observation in +Inf; it now gets its unit's preset, as a
 * declared histogram without `buckets` does.
 */
import { expect } from 'chai';
import { autoDetectedSpec } from '../../frontend/metrics/ingest.js';

describe('autoDetectedSpec (auto-detected histogram buckets)', () => {
  it('should give an auto-detected histogram its unit preset, not prom-client defaults, and a counter none', () => {
    const h = autoDetectedSpec({ name: 'Lat', type: 'histogram', unit: 'Milliseconds', dimensions: ['ModelName'] });
    expect(h.buckets).to.deep.equal([1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000]);
    expect(autoDetectedSpec({ name: 'Hits', type: 'counter', unit: 'Count', dimensions: [] }).buckets).to.deep.equal(
      [],
    );
  });
});
