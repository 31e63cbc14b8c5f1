import { expect } from 'chai';
import sharp from 'sharp';
import { DECODE_CONCURRENCY, DECODE_QUEUE, ImageDecoder } from '../../../frontend/image/image-decoder.js';
import { parseImageClassifierOptions } from '../../../schema/image/classifier-options.js';

describe('ImageDecoder (bounded decoding in the frontend)', () => {
  it(`should decode ${DECODE_CONCURRENCY} images at once, queue ${DECODE_QUEUE} more and refuse the next 503, counted`, async () => {
    const counted: string[] = [];
    const d = new ImageDecoder(parseImageClassifierOptions({ size: [2, 2], mean: 0, std: 1 }), (reason) => ({
      record: () => counted.push(reason),
    }));
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#ff0000' } })
      .png()
      .toBuffer();
    const all = await Promise.all(Array.from({ length: DECODE_CONCURRENCY + DECODE_QUEUE + 1 }, () => d.decode(png)));
    const refused = all.filter((r) => !('body' in r));
    expect(refused).to.deep.equal([
      { status: 503, message: `${DECODE_QUEUE} images are already waiting to be decoded` },
    ]);
    expect(counted).to.deep.equal(['decode_queue_full']);
    const first = all[0]!;
    // The 4x4 red image at the model's 2x2, as 8-bit RGB pixels in a buffer of their own.
    expect('body' in first && [first.body.width, first.body.height, first.body.channels]).to.deep.equal([2, 2, 3]);
    expect('body' in first && Array.from(first.body.pixels)).to.deep.equal([
      255, 0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0,
    ]);
    expect('body' in first && first.body.pixels.byteLength === first.body.pixels.buffer.byteLength).to.equal(true);
    // Every slot came back: the next image is decoded at once.
    expect('body' in (await d.decode(png))).to.equal(true);
  });

  it('should refuse an empty body and one over maxImageBytes before decoding', async () => {
    const counted: string[] = [];
    const d = new ImageDecoder(parseImageClassifierOptions({ maxImageBytes: 10 }), (reason) => ({
      record: () => counted.push(reason),
    }));
    expect(await d.decode(Buffer.alloc(0))).to.deep.equal({
      status: 400,
      message: 'missing request body: send the image (JPEG, PNG or WebP)',
    });
    expect(await d.decode(Buffer.alloc(11))).to.deep.equal({
      status: 413,
      message: 'the image is 11 bytes, over the bound of 10',
    });
    expect(counted).to.deep.equal(['empty', 'too_large']);
  });
});
