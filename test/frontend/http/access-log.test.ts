import { expect } from 'chai';
import * as http from 'http';
import * as net from 'net';
import type { AddressInfo } from 'net';
import { accessLogListener } from '../../../frontend/http/access-log.js';
import type { AccessRecord } from '../../../frontend/log/log.js';

/** A real node server with the access listener before a handler; resolves with its port. */
function serve(
  records: AccessRecord[],
  handler: http.RequestListener,
): Promise<{ server: http.Server; port: number; logged: Promise<void> }> {
  let done: () => void = () => undefined;
  const logged = new Promise<void>((r) => {
    done = r;
  });
  const server = http.createServer();
  server.on(
    'request',
    accessLogListener('inference', (r) => {
      records.push(r);
      done();
    }),
  );
  server.on('request', handler);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port, logged })),
  );
}

describe('accessLogListener', () => {
  it('should count the body bytes of a streamed answer and keep the answered request id', async () => {
    const records: AccessRecord[] = [];
    const { server, port, logged } = await serve(records, (_req, res) => {
      res.writeHead(201, { 'x-request-id': 'req-7' });
      res.write('data: é\n\n'); // 'é' is two bytes
      res.write(Buffer.from([1, 2, 3]));
      res.end('end');
    });
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/completions?x=1`, { method: 'POST', body: '{}' });
      await res.arrayBuffer();
      await logged;
      const { durationMs, ...rest } = records[0]!;
      expect(durationMs).to.be.at.least(0);
      expect(rest).to.deep.equal({
        listener: 'inference',
        port,
        method: 'POST',
        path: '/v1/completions?x=1',
        status: 201,
        bytes: 10 + 3 + 3,
        requestId: 'req-7',
      });
      expect(records.length).to.equal(1);
    } finally {
      server.close();
    }
  });

  it("should log a request whose client went away with status 0 and its listener's port (regression: port 0, read from the destroyed socket)", async () => {
    const records: AccessRecord[] = [];
    const { server, port, logged } = await serve(records, () => {
      /* never answers */
    });
    try {
      const sock = net.connect(port, '127.0.0.1', () => {
        sock.write('POST /predictions/mlp HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n[1');
      });
      server.once('request', () => sock.destroy());
      await logged;
      const { durationMs, requestId, ...rest } = records[0]!;
      expect([durationMs >= 0, requestId.length]).to.deep.equal([true, 36]);
      expect(rest).to.deep.equal({
        listener: 'inference',
        port,
        method: 'POST',
        path: '/predictions/mlp',
        status: 0,
        bytes: 0,
      });
    } finally {
      server.close();
    }
  });

  it('should give a request without an answered id a fresh UUID', async () => {
    const records: AccessRecord[] = [];
    const { server, port, logged } = await serve(records, (_req, res) => {
      res.end();
    });
    try {
      await (await fetch(`http://127.0.0.1:${port}/ping`)).text();
      await logged;
      expect(records[0]!.requestId).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect([records[0]!.status, records[0]!.bytes]).to.deep.equal([200, 0]);
    } finally {
      server.close();
    }
  });
});
