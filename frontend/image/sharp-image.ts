/**
 * The one adapter over sharp (libvips, shipped inside its npm packages): decodes + resizes an image
 * to 8-bit pixels on libuv's thread pool, never on the event loop (its header is read in JS
 * first: image-header.ts). Chosen over a pure-JS decoder (jpeg-js + pngjs) on a measurement: decode + resize of a
 * 640x480 JPEG took 17-19 ms with sharp and 160-260 ms with jpeg-js and a JS bilinear resize in
 * the same run (docs/models.md); sharp also reads WebP.
 */
import sharp from 'sharp';
import type { PixelData } from '../../schema/image/image-tensor.js';

// One libvips thread per image: a server gets its parallelism from concurrent requests (libuv's
// pool), and the workers need the cores for inference. No operation cache: every body is new.
sharp.concurrency(1);
sharp.cache(false);

/** What the header says. */
export interface ImageHeader {
  readonly format: string;
  readonly width: number;
  readonly height: number;
}

/** Why an image was refused; `reason` is the label of the refusal counter. */
export interface ImageProblem {
  readonly reason: 'not_an_image' | 'unsupported_format' | 'too_many_pixels' | 'corrupt' | 'decode_timeout';
  readonly message: string;
}

/** Where the decoded image goes: straight to width×height, or shorter side first, then a centered crop. */
export type ResizePlan =
  | { readonly kind: 'fill'; readonly width: number; readonly height: number }
  | {
      readonly kind: 'crop';
      readonly width: number;
      readonly height: number;
      readonly cropWidth: number;
      readonly cropHeight: number;
      /** The crop's offset in the resized image. */
      readonly left: number;
      readonly top: number;
    };

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0]!.slice(0, 200);
}

/**
 * Decodes `bytes` and resizes them as `plan` says (libvips' linear kernel, antialiased when
 * shrinking, like PIL's bilinear), alpha dropped as PIL's convert('RGB') drops it. A truncated
 * or corrupt file fails (failOn 'truncated'); `maxPixels` is enforced by libvips again.
 */
export async function decodeResized(
  bytes: Buffer,
  plan: ResizePlan,
  maxPixels: number,
  timeoutSec: number,
): Promise<PixelData | ImageProblem> {
  try {
    let img = sharp(bytes, { limitInputPixels: maxPixels, failOn: 'truncated' })
      .timeout({ seconds: timeoutSec })
      .removeAlpha()
      .resize(plan.width, plan.height, { fit: 'fill', kernel: 'linear' });
    if (plan.kind === 'crop') {
      img = img.extract({ left: plan.left, top: plan.top, width: plan.cropWidth, height: plan.cropHeight });
    }
    const { data, info } = await img.raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height, channels: info.channels };
  } catch (e) {
    const msg = firstLine(e);
    if (/timeout/i.test(msg))
      return { reason: 'decode_timeout', message: `decoding the image took longer than ${timeoutSec} s` };
    if (/pixel limit/i.test(msg))
      return { reason: 'too_many_pixels', message: `the image has more than ${maxPixels} pixels` };
    return { reason: 'corrupt', message: `the image cannot be decoded (truncated or corrupt): ${msg}` };
  }
}
