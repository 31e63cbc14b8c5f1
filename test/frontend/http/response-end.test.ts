import { expect } from 'chai';
import * as http from 'http';
import * as net from 'net';
import type { AddressInfo } from 'net';
import { onResponseEnd } from '../../../frontend/http/response-end.js';
import { until } from '../../support/until.js';

/** A real node server whose handler adds three watchers; resolves with its port. */
function serve(
  calls: string[],
  answer: (res: http.ServerResponse) => void,
): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((_req, res) => {
    for (const name of ['a', 'b', 'c']) onResponseEnd(res, (finished) => calls.push(`${name}:${String(finished)}`));
    answer(res);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port })),
  );
}

describe('onResponseEnd', () => {
  it('should tell each watcher once, in the order added, that an answered response finished', async () => {
    const calls: string[] = [];
    const { server, port } = await serve(calls, (res) => res.end('ok'));
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`);
      expect(await res.text()).to.equal('ok');
      await until(() => calls.length === 3, { message: 'three watchers told', observe: () => calls });
      // The response's 'close' follows its 'finish': nobody is told twice.
      await new Promise<void>((resolve) => server.close(() => resolve()));
      expect(calls).to.deep.equal(['a:true', 'b:true', 'c:true']);
    } finally {
      server.close();
    }
  });

  it('should tell each watcher once that the response closed unfinished when the client left first', async () => {
    const calls: string[] = [];
    let held = false;
    const { server, port } = await serve(calls, () => {
      held = true; // never answers
    });
    try {
      const socket = net.connect(port, '127.0.0.1');
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => held, { message: 'the server holding the request' });
      expect(calls).to.deep.equal([]);
      socket.destroy();
      await until(() => calls.length === 3, { message: 'three watchers told', observe: () => calls });
      expect(calls).to.deep.equal(['a:false', 'b:false', 'c:false']);
    } finally {
      server.close();
    }
  });
});
