import { expect } from 'chai';
import type { Duplex } from 'stream';
import { clientErrorListener } from '../../../frontend/http/client-error.js';
import type { AccessRecord } from '../../../frontend/log/log.js';

/** A socket seen by the listener: what was written and whether it was destroyed. */
function socket(): { s: Duplex; written: string[]; destroyed: () => boolean } {
  const written: string[] = [];
  let destroyed = false;
  const s = {
    writable: true,
    bytesWritten: 0,
    localPort: 8080,
    write: (t: string) => {
      written.push(t);
      return true;
    },
    destroy: () => {
      destroyed = true;
    },
  };
  return { s: s as unknown as Duplex, written, destroyed: () => destroyed };
}

/** What one parser error does: counts, access records' statuses, bytes written, destroyed. */
function outcome(code: string): [number[], number[], string[], boolean] {
  const counted: number[] = [];
  const access: AccessRecord[] = [];
  const { s, written, destroyed } = socket();
  clientErrorListener(
    'inference',
    (r) => access.push(r),
    (st) => counted.push(st),
  )(Object.assign(new Error('Parse Error'), { code }), s);
  return [counted, access.map((r) => r.status), written, destroyed()];
}

describe('clientErrorListener', () => {
  it('should answer, count and log a malformed request as node answers it', () => {
    expect(outcome('HPE_INVALID_METHOD')).to.deep.equal([
      [400],
      [400],
      ['HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'],
      true,
    ]);
    expect(outcome('HPE_HEADER_OVERFLOW')).to.deep.equal([
      [431],
      [431],
      ['HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n'],
      true,
    ]);
  });

  it('should neither answer, count nor log a connection the client closed mid-request (regression: an abandoned upload was a Requests4XX and a second access record, status 400, besides its own with status 0)', () => {
    expect(outcome('HPE_INVALID_EOF_STATE')).to.deep.equal([[], [], [], true]);
  });
});
