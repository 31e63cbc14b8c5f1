import { expect } from 'chai';
import sharp from 'sharp';
import type { Sharp } from 'sharp';
import { readImageHeader } from '../../../frontend/image/image-header.js';

describe('readImageHeader (format and dimensions before any decoder runs)', () => {
  const make = (w: number, h: number, alpha = false): Sharp =>
    sharp({
      create: { width: w, height: h, channels: alpha ? 4 : 3, background: { r: 9, g: 99, b: 199, alpha: 0.5 } },
    });

  it('should read the size sharp reads from PNG, JPEG (also behind EXIF), and lossy, lossless and extended WebP', async () => {
    const cases: [string, Promise<Buffer>][] = [
      ['png', make(321, 45).png().toBuffer()],
      ['jpeg', make(640, 480).jpeg().toBuffer()],
      [
        'jpeg',
        make(33, 17)
          .withMetadata({ exif: { IFD0: { Copyright: 'x'.repeat(3000) } } })
          .jpeg()
          .toBuffer(),
      ],
      ['webp', make(301, 7).webp().toBuffer()],
      ['webp', make(16383, 2).webp({ lossless: true }).toBuffer()],
      ['webp', make(50, 60, true).webp({ lossless: false }).toBuffer()],
    ];
    for (const [format, p] of cases) {
      const b = await p;
      const m = await sharp(b).metadata();
      expect(readImageHeader(b), format).to.deep.equal({ format, width: m.width, height: m.height });
    }
  });

  it('should name what is not an image, what is not taken, and a cut header', () => {
    expect(readImageHeader(Buffer.from('hello'))).to.deep.equal({
      reason: 'not_an_image',
      message: 'the body is not an image (send JPEG, PNG or WebP bytes)',
    });
    expect(readImageHeader(Buffer.from('GIF89a....'))).to.deep.equal({
      reason: 'unsupported_format',
      message: 'image format gif is not taken (send JPEG, PNG or WebP)',
    });
    expect(readImageHeader(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]))).to.deep.equal({
      reason: 'corrupt',
      message: 'the png header cannot be read: no IHDR chunk',
    });
    expect(readImageHeader(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0, 0]))).to.deep.equal({
      reason: 'corrupt',
      message: 'the jpeg header cannot be read: no frame header',
    });
  });
});
