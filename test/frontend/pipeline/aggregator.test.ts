/** The logging view of a pipeline: the DEBUG table of a request and the INFO line per interval. */
import { expect } from 'chai';
import { PipelineAggregator, renderTrace } from '../../../frontend/pipeline/aggregator.js';

describe('PipelineAggregator', () => {
  it("should render a request's stage timings and every hop as a table", () => {
    const t = {
      requestId: 'r1',
      arrivalMs: 100,
      thinkerReplica: 1,
      vocoderReplica: 0,
      thinkerFirstMs: 150,
      thinkerDoneMs: 300,
      firstAudioMs: 200,
      endMs: 350,
      reason: 'length' as const,
      frames: 1920,
      hops: [
        { seq: 0, bytes: 16, txMs: 0.125, rxMs: 0.5, inFlightMs: 2, sentEpochMs: 0 },
        { seq: 1, bytes: 8, txMs: 0.25, rxMs: NaN, inFlightMs: NaN, sentEpochMs: 0 },
      ],
    };
    expect(renderTrace('tiny-omni', ['thinker', 'code2wav'], t).split('\n')).to.deep.equal([
      '[tiny-omni] request r1 finished length in 250.0 ms, 1920 frames',
      '  stage     replica  first_ms  done_ms',
      '  thinker   1            50.0    200.0',
      '  code2wav  0           100.0    250.0',
      '  hop thinker/1 -> code2wav/0: seq  bytes  tx_ms  rx_ms  in_flight_ms',
      '       0     16  0.125  0.500         2.000',
      '       1      8  0.250      -             -',
    ]);
  });

  it('should print one INFO line per interval from the finished requests, then DEBUG when idle', () => {
    const tables: string[] = [];
    const a = new PipelineAggregator(
      'tiny-omni',
      ['thinker', 'code2wav'],
      24000,
      (l) => tables.push(l),
      () => ({ running: 1, waiting: 0 }),
    );
    const t = a.newTrace('r1', 0, 0, 0);
    t.endMs = 500;
    t.reason = 'stop';
    t.frames = 48000;
    t.hops.push({ seq: 0, bytes: 16, txMs: 0.1, rxMs: 0.2, inFlightMs: 1.5, sentEpochMs: 0 });
    a.finished(t);
    expect(tables.length).to.equal(1);
    expect(a.statLines()).to.deep.equal([
      {
        level: 'info',
        line: '[tiny-omni] pipeline: finished 1 (stop 1, length 0, abort 0, error 0), running 1, waiting 0, mean e2e 0.500 s, audio 2.00 s, transfers 1 chunks 16 B, mean in flight 1.500 ms',
      },
    ]);
    const idle = new PipelineAggregator('p', ['a', 'b'], 24000, null, () => ({ running: 0, waiting: 0 }));
    expect(idle.statLines()[0]!.level).to.equal('debug');
  });
});
