/**
 * Decodes the images of one `image_classifier` model in the frontend, before anything reaches a
 * worker: a bad image is answered 400 here and never costs a worker anything. Header first (the
 * pixel bound is checked on the dimensions it declares, before a byte is decoded), then decode +
 * resize on libuv's pool; the 8-bit pixels at the model's size go to the worker, which
 * normalizes them (schema/image/image-tensor.ts). At most DECODE_CONCURRENCY decodes run at once; up
 * to DECODE_QUEUE more wait, and past that a request is refused 503. Every refusal counts in
 * `ts_image_refused_total{model_name, reason}`.
 */
import { performance } from 'perf_hooks';
import type { ImageClassifierOptions, ImageJobBody } from '../../schema/image/classifier-options.js';
import type { BoundSeries } from '../../schema/metrics-api.js';
import { resizePlan } from './resize-plan.js';
import { readImageHeader } from './image-header.js';
import { decodeResized } from './sharp-image.js';

/** Decodes running at once per model: libuv's default pool has 4 threads. */
export const DECODE_CONCURRENCY = 4;
/** Decodes waiting per model beyond those; more is a 503 (`reason="decode_queue_full"`). */
export const DECODE_QUEUE = 256;

/** A decoded image: the request's body for the worker (its pixels at the model's size, and what was decoded). */
export interface DecodedImage {
  readonly body: ImageJobBody;
}

/** A refused image: the status and message to answer. */
export interface ImageRefusal {
  readonly status: number;
  readonly message: string;
}

/** Binds `ts_image_refused_total` for one reason. */
export type RefusalSeries = (reason: string) => BoundSeries;

/** One model's decoder. */
export class ImageDecoder {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly refused = new Map<string, BoundSeries>();

  constructor(
    readonly options: ImageClassifierOptions,
    private readonly series: RefusalSeries,
  ) {}

  /** Decodes one request's image bytes; never rejects. */
  async decode(bytes: Buffer): Promise<DecodedImage | ImageRefusal> {
    const o = this.options;
    if (bytes.length === 0)
      return this.refuse('empty', 400, 'missing request body: send the image (JPEG, PNG or WebP)');
    if (bytes.length > o.maxImageBytes)
      return this.refuse('too_large', 413, `the image is ${bytes.length} bytes, over the bound of ${o.maxImageBytes}`);
    if (this.running >= DECODE_CONCURRENCY) {
      if (this.waiting.length >= DECODE_QUEUE)
        return this.refuse('decode_queue_full', 503, `${DECODE_QUEUE} images are already waiting to be decoded`);
      // Woken with the slot of a decode that finished (handed over, so none is taken meanwhile).
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    try {
      return await this.run(bytes);
    } finally {
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.running--;
    }
  }

  private async run(bytes: Buffer): Promise<DecodedImage | ImageRefusal> {
    const o = this.options;
    const t0 = performance.now();
    const header = readImageHeader(bytes);
    if ('reason' in header) return this.refuse(header.reason, 400, header.message);
    const declared = header.width * header.height;
    if (declared > o.maxPixels)
      return this.refuse(
        'too_many_pixels',
        400,
        `the ${header.format} image is ${header.width}x${header.height} = ${declared} pixels, over the bound of ${o.maxPixels}`,
      );
    const px = await decodeResized(bytes, resizePlan(o, header), o.maxPixels, o.decodeTimeoutSec);
    if ('reason' in px) return this.refuse(px.reason, 400, px.message);
    // A view of a larger buffer would cross the channel whole: copied to its own when it is one.
    const d = px.data;
    const pixels = d.byteOffset === 0 && d.byteLength === d.buffer.byteLength ? d : new Uint8Array(d);
    const decodeMs = performance.now() - t0;
    const info = { format: header.format, width: header.width, height: header.height, decodeMs };
    return { body: { pixels, width: px.width, height: px.height, channels: px.channels, info } };
  }

  private refuse(reason: string, status: number, message: string): ImageRefusal {
    let s = this.refused.get(reason);
    if (s === undefined) this.refused.set(reason, (s = this.series(reason)));
    s.record(1);
    return { status, message };
  }
}
