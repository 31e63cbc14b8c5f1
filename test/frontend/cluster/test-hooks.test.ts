import { expect } from 'chai';
import { HEARTBEAT_ENV, STALL_ENV, installStallHook, testHeartbeatMs } from '../../../frontend/cluster/test-hooks.js';

describe('test hooks of the fronts', () => {
  it('should read no heartbeat interval when its variable is unset, and the ms when it is set within 10..5000', () => {
    expect([
      testHeartbeatMs({}),
      testHeartbeatMs({ [HEARTBEAT_ENV]: '10' }),
      testHeartbeatMs({ [HEARTBEAT_ENV]: '5000' }),
    ]).to.deep.equal([undefined, 10, 5000]);
  });

  it('should refuse a heartbeat interval that is not an integer of ms within 10..5000, naming the variable and the value', () => {
    const refusal = (raw: string): string => {
      try {
        testHeartbeatMs({ [HEARTBEAT_ENV]: raw });
        return 'accepted';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(['9', '5001', '1e3', '', 'abc'].map(refusal)).to.deep.equal(
      ['9', '5001', '1e3', '', 'abc'].map(
        (v) =>
          `TSSERVE_TEST_FRONT_HEARTBEAT_MS (a test hook): expected an integer of ms from 10 to 5000, got ${JSON.stringify(v)}`,
      ),
    );
  });

  it('should install no SIGUSR2 listener without its variable, and log a bad stall instead of installing one', () => {
    const before = process.listenerCount('SIGUSR2');
    const lines: string[] = [];
    installStallHook((level, msg) => lines.push(`${level}: ${msg}`), {});
    installStallHook((level, msg) => lines.push(`${level}: ${msg}`), { [STALL_ENV]: 'soon' });
    expect([process.listenerCount('SIGUSR2') - before, lines]).to.deep.equal([
      0,
      [
        `error: TSSERVE_TEST_FRONT_STALL (a test hook): expected an integer of ms or 'forever', got "soon"; no stall hook`,
      ],
    ]);
  });
});
