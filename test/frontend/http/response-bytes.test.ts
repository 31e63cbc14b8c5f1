import { expect } from 'chai';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { responseBytes } from '../../../frontend/http/response-bytes.js';

describe('responseBytes', () => {
  it('should count the body bytes written once, whichever readers ask, with write and end wrapped a single time', async () => {
    const seen: number[][] = [];
    const server = http.createServer((_req, res) => {
      const a = responseBytes(res);
      const wrappedWrite = Reflect.get(res, 'write') as unknown;
      const b = responseBytes(res);
      expect(b).to.equal(a);
      expect(Reflect.get(res, 'write')).to.equal(wrappedWrite); // the second reader did not wrap again
      res.write('héllo'); // 6 bytes in UTF-8
      res.write(Buffer.from([1, 2, 3]));
      res.end('!', () => seen.push([a.bytes, b.bytes]));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const body = Buffer.from(await (await fetch(`http://127.0.0.1:${port}/`)).arrayBuffer());
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(body.length).to.equal(10);
    expect(seen).to.deep.equal([[10, 10]]);
  });
});
