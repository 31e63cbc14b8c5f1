import { expect } from 'chai';
import { DatagramPacker, isLoopbackHost } from '../../../../frontend/metrics/sinks/statsd-packer.js';

describe('DatagramPacker', () => {
  function packer(maxBytes: number): { p: DatagramPacker; sent: string[] } {
    const sent: string[] = [];
    return {
      p: new DatagramPacker(
        maxBytes,
        60_000,
        (d) => sent.push(d),
        (line) => expect.fail(`refused ${line}`),
      ),
      sent,
    };
  }

  it('should pack whole lines up to maxBytes, newline-separated, and send the rest on flush', () => {
    const { p, sent } = packer(20);
    for (const l of ['a:1|c', 'b:22|c', 'c:333|c', 'd:4|c']) p.add(l); // 5 + 1 + 6 = 12; + 1 + 7 = 20 fits; d would make 26
    expect(sent).to.deep.equal(['a:1|c\nb:22|c\nc:333|c']);
    p.flush();
    expect(sent).to.deep.equal(['a:1|c\nb:22|c\nc:333|c', 'd:4|c']);
    p.flush(); // nothing packed: nothing sent
    expect(sent).to.have.length(2);
  });

  it('should count UTF-8 bytes, not characters, and send a line longer than maxBytes alone', () => {
    const { p, sent } = packer(10);
    p.add('é:1|c'); // 6 bytes in UTF-8 (5 characters)
    p.add('x:1|c'); // 6 + 1 + 5 = 12 > 10: the first goes alone
    p.add('long_name:12345|c'); // 17 bytes: flushes x, then waits alone
    p.flush();
    expect(sent).to.deep.equal(['é:1|c', 'x:1|c', 'long_name:12345|c']);
  });

  it('should hand a line over 8192 bytes to tooLong instead of sending it (DogStatsD would cut it), whatever maxBytes', () => {
    // Regression: such a line went out alone; DogStatsD reads 8192 bytes and parsed the rest as a malformed packet.
    const sent: string[] = [];
    const refused: Array<[number, number]> = [];
    const p = new DatagramPacker(
      1400,
      60_000,
      (d) => sent.push(d),
      (line, bytes) => refused.push([line.length, bytes]),
    );
    p.add('a:1|c');
    p.add(`b:1|c|#v:${'x'.repeat(8192 - 9)}`); // 8192 bytes: the most an agent reads, sent alone
    p.add(`c:1|c|#v:${'é'.repeat(4092)}`); // 4101 characters, 8193 bytes in UTF-8: refused
    p.add('d:1|c');
    p.flush();
    expect(sent.map((d) => d.length)).to.deep.equal([5, 8192, 5]);
    expect(refused).to.deep.equal([[4101, 8193]]);
  });

  it('should send what waits when the timer fires', async () => {
    let sent!: (d: string) => void;
    const first = new Promise<string>((resolve) => {
      sent = resolve;
    });
    const p = new DatagramPacker(
      8192,
      5,
      (d) => sent(d),
      (line) => expect.fail(`refused ${line}`),
    );
    p.add('a:1|c');
    p.add('b:2|c');
    expect(await first).to.equal('a:1|c\nb:2|c');
  });

  it('should treat only addresses that never leave the host as loopback', () => {
    expect(['127.0.0.1', '127.1.2.3', 'localhost', '::1'].map(isLoopbackHost)).to.deep.equal([true, true, true, true]);
    expect(
      ['10.0.0.1', 'statsd.local', '0.0.0.0', '128.0.0.1', '127.0.0.1.example.com'].map(isLoopbackHost),
    ).to.deep.equal([false, false, false, false, false]);
  });
});
