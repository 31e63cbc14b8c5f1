import { expect } from 'chai';
import dgram from 'node:dgram';
import { ConnectedUdp, MAX_PENDING_DATAGRAMS } from '../../../../frontend/metrics/sinks/statsd-udp.js';
import { until } from '../../../support/until.js';

/** A UDP port nothing listens on (bound, read, closed). */
async function deadPort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve));
  const port = s.address().port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe('ConnectedUdp (the statsd sink socket)', () => {
  it('should send each message as one datagram, byte for byte, without the newline hot-shots appends', async () => {
    const server = dgram.createSocket('udp4');
    const got: string[] = [];
    server.on('message', (m) => got.push(m.toString()));
    await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
    const u = new ConnectedUdp('127.0.0.1', server.address().port, { retryMs: 60_000 });
    try {
      const results: (string | null)[] = [];
      for (const m of ['a:1|c\n', 'b:2|g\nc:3|c\n', 'd:4|ms']) u.write(m, (err) => results.push(err?.message ?? null));
      await until(() => got.length === 3, { message: 'three datagrams', observe: () => got });
      expect([got, results]).to.deep.equal([
        ['a:1|c', 'b:2|g\nc:3|c', 'd:4|ms'],
        [null, null, null],
      ]);
    } finally {
      u.destroy();
      server.close();
    }
  });

  it('should report each datagram refused by a port nothing listens on as one error event', async () => {
    const u = new ConnectedUdp('127.0.0.1', await deadPort(), { retryMs: 60_000 });
    const errors: string[] = [];
    u.on('error', (e: Error) => errors.push(e.message));
    try {
      for (let i = 1; i <= 5; i++) {
        u.write(`x:${i}|c\n`, () => undefined);
        await until(() => errors.length === i, { message: `refusal ${i}`, observe: () => errors });
      }
      expect(errors).to.deep.equal(
        new Array<string>(5).fill(
          'nothing listens there: a datagram was refused (ICMP port unreachable, recvmsg ECONNREFUSED)',
        ),
      );
    } finally {
      u.destroy();
    }
  });

  it('should fail every datagram while the name does not resolve, and try again only after retryMs', async () => {
    let now = 0;
    const u = new ConnectedUdp('no-such-statsd-agent.invalid', 8125, { retryMs: 60_000, nowMs: () => now });
    const results: string[] = [];
    const write = (): void => {
      u.write('x:1|c\n', (err) => results.push(err === null || err === undefined ? 'sent' : 'failed'));
    };
    try {
      write(); // waits for the lookup, then fails with it
      await until(() => results.length === 1, { message: 'the first result', observe: () => results });
      write(); // the failure is kept: fails at once, no new lookup
      expect(results).to.deep.equal(['failed', 'failed']);
      now = 60_000;
      write(); // past retryMs: a fresh connect, which fails again
      expect(results.length).to.equal(2);
      await until(() => results.length === 3, { message: 'the retried result', observe: () => results });
      expect(results).to.deep.equal(['failed', 'failed', 'failed']);
    } finally {
      u.destroy();
    }
  });

  it(`should hold at most ${MAX_PENDING_DATAGRAMS} datagrams while it connects and fail the ones past that`, async () => {
    const server = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
    // A name: the socket connects after its lookup, so the writes below all come while it connects.
    const u = new ConnectedUdp('localhost', server.address().port, { retryMs: 60_000 });
    const failed: string[] = [];
    let done = 0;
    try {
      for (let i = 0; i < MAX_PENDING_DATAGRAMS + 44; i++)
        u.write('x:1|c\n', (err) => {
          done++;
          if (err) failed.push(err.message);
        });
      expect(failed).to.deep.equal(
        new Array<string>(44).fill(
          `more than ${MAX_PENDING_DATAGRAMS} datagrams waiting for the statsd socket to connect`,
        ),
      );
      await until(() => done === MAX_PENDING_DATAGRAMS + 44, { message: 'every write answered', observe: () => done });
      expect(failed.length).to.equal(44);
    } finally {
      u.destroy();
      server.close();
    }
  });
});
