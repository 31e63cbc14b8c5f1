/**
 * From decoded 8-bit pixels to the model's float32 input: values / 255, minus mean, over std, per
 * channel, in NCHW or NHWC, RGB or BGR; columns and rows the pixels do not cover (the `pad` fit's
 * right side) stay 0. In schema/ because the frontend decodes and the worker normalizes: the
 * pixels cross the channel (a quarter of the float32 tensor's bytes).
 */
import type { ImageClassifierOptions } from './classifier-options.js';
import { imageInputSize } from './classifier-options.js';

/** Decoded pixels, interleaved, `channels` per pixel (1 to 4, as the file has them). */
export interface PixelData {
  readonly data: Uint8Array;
  readonly width: number;
  readonly height: number;
  readonly channels: number;
}

/** Writes one image's normalized input at `offset` of `out` (which must hold 0 where the pixels do not reach). */
export function writeImageTensor(o: ImageClassifierOptions, px: PixelData, out: Float32Array, offset = 0): void {
  const { data, channels } = px;
  const cols = Math.min(px.width, o.width);
  const rows = Math.min(px.height, o.height);
  const plane = o.height * o.width;
  // Source channel of each output channel: grey repeats its one band; BGR reverses RGB.
  const src = (c: number): number => (channels < 3 ? 0 : o.channels === 'BGR' ? 2 - c : c);
  for (let c = 0; c < 3; c++) {
    const scale = 1 / (255 * o.std[c]!);
    const shift = o.mean[c]! / o.std[c]!;
    const s = src(c);
    for (let y = 0; y < rows; y++) {
      const rowIn = y * px.width * channels;
      for (let x = 0; x < cols; x++) {
        const v = data[rowIn + x * channels + s]! * scale - shift;
        if (o.layout === 'NCHW') out[offset + c * plane + y * o.width + x] = v;
        else out[offset + (y * o.width + x) * 3 + c] = v;
      }
    }
  }
}

/** The normalized input tensor of one image (3 × height × width values). */
export function imageTensor(o: ImageClassifierOptions, px: PixelData): Float32Array {
  const out = new Float32Array(imageInputSize(o));
  writeImageTensor(o, px, out);
  return out;
}
