/**
 * The `handlerOptions:` of a `handler: image_classifier` model, read by both sides: the frontend
 * decodes and normalizes the image with them, the worker shapes the tensor and maps the output
 * to labels. Defaults are TorchServe's image_classifier: resize the shorter side to 256, center
 * crop 224, ImageNet mean/std, NCHW, RGB, softmax over logits, top 5 from index_to_name.json.
 */

/** How the image becomes the model's input size. */
export type ImageFit = 'resize_crop' | 'stretch' | 'pad';

/** The parsed options, every default filled in. */
export interface ImageClassifierOptions {
  /** `resize_crop`: shorter side to `resize`, center crop; `stretch`: straight to height×width; `pad`: PaddleOCR's height, width by aspect up to `width`, zeros to the right. */
  readonly fit: ImageFit;
  /** Shorter side before the crop (`resize_crop` only). */
  readonly resize: number;
  /** The model input's height and width. */
  readonly height: number;
  readonly width: number;
  readonly mean: readonly [number, number, number];
  readonly std: readonly [number, number, number];
  readonly layout: 'NCHW' | 'NHWC';
  /** Channel order of the input tensor (PaddleOCR models are trained on OpenCV's BGR). */
  readonly channels: 'RGB' | 'BGR';
  /** Apply softmax to the output (the model outputs logits). */
  readonly softmax: boolean;
  readonly topk: number;
  /** The label file inside the model directory; absent from the directory, labels are the class indices. */
  readonly labels: string;
  /** Largest request image, in bytes (before decoding). */
  readonly maxImageBytes: number;
  /** Largest width × height the image's header may declare (decompression bombs are refused before decoding). */
  readonly maxPixels: number;
  /** Seconds one decode may take (libvips' timeout, whole seconds). */
  readonly decodeTimeoutSec: number;
}

/** TorchServe's ImageNet normalization: the per-channel mean… */
export const IMAGENET_MEAN: readonly [number, number, number] = [0.485, 0.456, 0.406];
/** …and standard deviation. */
export const IMAGENET_STD: readonly [number, number, number] = [0.229, 0.224, 0.225];

/** Default bound on an image's bytes: 16 MiB. */
export const DEFAULT_MAX_IMAGE_BYTES = 16 * 1024 * 1024;
/** Default bound on the pixels a header declares: 40 megapixels (an 8K frame is 33). */
export const DEFAULT_MAX_PIXELS = 40_000_000;
/** Default bound on one decode: 5 s. */
export const DEFAULT_DECODE_TIMEOUT_SEC = 5;

/** Largest side of the model input (a 4096×4096×3 float32 tensor is 192 MiB). */
const MAX_SIDE = 4096;

const KNOWN = new Set([
  'resize',
  'crop',
  'size',
  'fit',
  'mean',
  'std',
  'layout',
  'channels',
  'softmax',
  'topk',
  'labels',
  'maxImageBytes',
  'maxPixels',
  'decodeTimeoutSec',
]);

type Problems = string[];

function intIn(o: Readonly<Record<string, unknown>>, key: string, def: number, max: number, p: Problems): number {
  const v = o[key];
  if (v === undefined || v === null) return def;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) {
    p.push(`handlerOptions.${key}: must be an integer in 1..${max} (got ${JSON.stringify(v)})`);
    return def;
  }
  return v;
}

/** `224` or `[48, 192]` (height, width). */
function sizeOf(o: Readonly<Record<string, unknown>>, key: string, def: number, p: Problems): [number, number] {
  const v = o[key];
  if (v === undefined || v === null) return [def, def];
  if (typeof v === 'number') {
    const side = intIn(o, key, def, MAX_SIDE, p);
    return [side, side];
  }
  const ok = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 1 && x <= MAX_SIDE;
  if (Array.isArray(v) && v.length === 2 && ok(v[0]) && ok(v[1])) return [v[0], v[1]];
  p.push(`handlerOptions.${key}: must be an integer or [height, width] in 1..${MAX_SIDE} (got ${JSON.stringify(v)})`);
  return [def, def];
}

function triple(
  o: Readonly<Record<string, unknown>>,
  key: string,
  def: readonly [number, number, number],
  positive: boolean,
  p: Problems,
): readonly [number, number, number] {
  const v = o[key];
  if (v === undefined || v === null) return def;
  const good = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && (!positive || x > 0);
  if (good(v)) return [v, v, v];
  if (Array.isArray(v) && v.length === 3 && v.every(good)) return [v[0] as number, v[1] as number, v[2] as number];
  p.push(
    `handlerOptions.${key}: must be a ${positive ? 'positive ' : ''}number or a list of 3 (one per channel), got ${JSON.stringify(v)}`,
  );
  return def;
}

function oneOf<T extends string>(
  o: Readonly<Record<string, unknown>>,
  key: string,
  values: readonly T[],
  def: T,
  p: Problems,
): T {
  const v = o[key];
  if (v === undefined || v === null) return def;
  if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
  p.push(`handlerOptions.${key}: must be one of ${values.join(', ')} (got ${JSON.stringify(v)})`);
  return def;
}

/** Parses `handlerOptions`; `problems` gets one line per bad key (unknown keys included). */
export function parseImageClassifierOptions(
  raw: Readonly<Record<string, unknown>> | undefined,
  problems: string[] = [],
): ImageClassifierOptions {
  const o = raw ?? {};
  for (const k of Object.keys(o))
    if (!KNOWN.has(k)) problems.push(`handlerOptions.${k}: unknown option of handler image_classifier`);
  const hasSize = o['size'] !== undefined && o['size'] !== null;
  const fit = oneOf(
    o,
    'fit',
    ['resize_crop', 'stretch', 'pad'] as const,
    hasSize ? 'stretch' : 'resize_crop',
    problems,
  );
  const [height, width] = fit === 'resize_crop' ? sizeOf(o, 'crop', 224, problems) : sizeOf(o, 'size', 224, problems);
  if (fit === 'resize_crop' && hasSize)
    problems.push('handlerOptions.size: goes with fit stretch or pad; fit resize_crop takes resize and crop');
  if (fit !== 'resize_crop' && (o['crop'] !== undefined || o['resize'] !== undefined))
    problems.push(`handlerOptions.crop/resize: go with fit resize_crop; fit ${fit} takes size`);
  const resize = intIn(o, 'resize', 256, MAX_SIDE, problems);
  if (fit === 'resize_crop' && resize < Math.max(height, width))
    problems.push(`handlerOptions.resize: ${resize} is smaller than the crop ${height}x${width}`);
  const softmax = o['softmax'] ?? true;
  if (typeof softmax !== 'boolean')
    problems.push(`handlerOptions.softmax: must be true or false (got ${JSON.stringify(softmax)})`);
  const labels = o['labels'] ?? 'index_to_name.json';
  if (typeof labels !== 'string' || labels === '')
    problems.push(`handlerOptions.labels: must be a file name in the model directory (got ${JSON.stringify(labels)})`);
  return {
    fit,
    resize,
    height,
    width,
    mean: triple(o, 'mean', IMAGENET_MEAN, false, problems),
    std: triple(o, 'std', IMAGENET_STD, true, problems),
    layout: oneOf(o, 'layout', ['NCHW', 'NHWC'] as const, 'NCHW', problems),
    channels: oneOf(o, 'channels', ['RGB', 'BGR'] as const, 'RGB', problems),
    softmax: softmax === true,
    topk: intIn(o, 'topk', 5, 1000, problems),
    labels: typeof labels === 'string' && labels !== '' ? labels : 'index_to_name.json',
    maxImageBytes: intIn(o, 'maxImageBytes', DEFAULT_MAX_IMAGE_BYTES, 1024 * 1024 * 1024, problems),
    maxPixels: intIn(o, 'maxPixels', DEFAULT_MAX_PIXELS, 1_000_000_000, problems),
    decodeTimeoutSec: intIn(o, 'decodeTimeoutSec', DEFAULT_DECODE_TIMEOUT_SEC, 3600, problems),
  };
}

/** The input tensor's dims for `batch` images. */
export function imageInputDims(o: ImageClassifierOptions, batch: number): number[] {
  return o.layout === 'NCHW' ? [batch, 3, o.height, o.width] : [batch, o.height, o.width, 3];
}

/** Values in one image's input tensor (3 × height × width). */
export function imageInputSize(o: ImageClassifierOptions): number {
  return 3 * o.height * o.width;
}

/** What the frontend tells the handler about one decoded image (part of the request's body). */
export interface DecodedImageInfo {
  readonly format: string;
  readonly width: number;
  readonly height: number;
  /** Decode + resize + normalize, ms, measured in the frontend. */
  readonly decodeMs: number;
}

/** A decoded image as it crosses to the worker (the request's body): its resized pixels and what was decoded. */
export interface ImageJobBody {
  readonly pixels: Uint8Array;
  readonly width: number;
  readonly height: number;
  readonly channels: number;
  readonly info: DecodedImageInfo;
}
