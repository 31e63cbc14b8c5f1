import { expect } from 'chai';
import { FAULT_LOG_INTERVAL_MS, OutputFaults } from '../../../frontend/workers/output-faults.js';
import type { WorkerOutputFault } from '../../../frontend/workers/output-faults.js';

/** An OutputFaults whose counts, log lines and clock the test holds. */
function faults(): {
  f: OutputFaults;
  counts: Map<WorkerOutputFault, number>;
  lines: string[];
  at: (ms: number) => void;
} {
  const counts = new Map<WorkerOutputFault, number>();
  const lines: string[] = [];
  let now = 1000;
  const f = new OutputFaults(
    (reason, n) => counts.set(reason, (counts.get(reason) ?? 0) + n),
    (msg) => lines.push(msg),
    () => now,
  );
  return {
    f,
    counts,
    lines,
    at: (ms) => {
      now = ms;
    },
  };
}

describe('OutputFaults', () => {
  it('should count every fault but log the first of a kind, then at most one a minute with how many were only counted (regression: one error line per batch flooded ts_log)', () => {
    const { f, counts, lines, at } = faults();
    for (let i = 0; i < 5; i++) f.report('malformed_result', 1, `bad batch ${i}`);
    at(1000 + FAULT_LOG_INTERVAL_MS - 1);
    f.report('malformed_result', 1, 'bad batch 5');
    at(1000 + FAULT_LOG_INTERVAL_MS);
    f.report('malformed_result', 1, 'bad batch 6');
    at(1000 + 3 * FAULT_LOG_INTERVAL_MS);
    f.report('malformed_result', 1, 'bad batch 7');
    expect([...counts]).to.deep.equal([['malformed_result', 8]]);
    expect(lines).to.deep.equal([
      'bad batch 0 (further ones are logged at most once a minute; all are counted in tsserve_worker_output_faults_total{reason="malformed_result"})',
      'bad batch 6 (5 more like it in the last 60 s were only counted)',
      'bad batch 7',
    ]);
  });

  it('should space the log lines of each kind apart, and count an extra_response report by its number of responses', () => {
    const { f, counts, lines } = faults();
    f.report('malformed_result', 1, 'a');
    f.report('extra_response', 3, 'b');
    f.report('extra_response', 2, 'c');
    f.report('unknown_batch', 1, 'd');
    expect([...counts]).to.deep.equal([
      ['malformed_result', 1],
      ['extra_response', 5],
      ['unknown_batch', 1],
    ]);
    expect(lines).to.deep.equal([
      'a (further ones are logged at most once a minute; all are counted in tsserve_worker_output_faults_total{reason="malformed_result"})',
      'b (further ones are logged at most once a minute; all are counted in tsserve_worker_output_faults_total{reason="extra_response"})',
      'd (further ones are logged at most once a minute; all are counted in tsserve_worker_output_faults_total{reason="unknown_batch"})',
    ]);
  });

  it('should count a truncated log line without a log line of its own', () => {
    const { f, counts, lines } = faults();
    f.countOnly('log_line_truncated');
    f.countOnly('log_line_truncated');
    expect([[...counts], lines]).to.deep.equal([[['log_line_truncated', 2]], []]);
  });
});
