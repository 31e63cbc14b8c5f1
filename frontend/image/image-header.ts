/**
 * An image's format and dimensions read from its first bytes in JS, before any decoder sees
 * them: the pixel bound is judged on what the header declares (a decompression bomb is refused
 * before a byte of it is decoded), and the resize plan needs the size. PNG's IHDR, JPEG's SOFn
 * marker (the markers before it are skipped by their lengths), WebP's VP8 / VP8L / VP8X chunk.
 * GIF and TIFF are recognized only to be named in the refusal.
 */
import type { ImageHeader, ImageProblem } from './sharp-image.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Bytes of a JPEG scanned for its SOF marker; a file whose frame header lies later is refused. */
const JPEG_SCAN_BYTES = 1024 * 1024;

const corrupt = (format: string, why: string): ImageProblem => ({
  reason: 'corrupt',
  message: `the ${format} header cannot be read: ${why}`,
});

function sized(format: string, width: number, height: number): ImageHeader | ImageProblem {
  if (width < 1 || height < 1) return { reason: 'corrupt', message: `the ${format} header declares no dimensions` };
  return { format, width, height };
}

function png(b: Buffer): ImageHeader | ImageProblem {
  if (b.length < 24 || b.toString('latin1', 12, 16) !== 'IHDR') return corrupt('png', 'no IHDR chunk');
  return sized('png', b.readUInt32BE(16), b.readUInt32BE(20));
}

function jpeg(b: Buffer): ImageHeader | ImageProblem {
  let at = 2;
  const end = Math.min(b.length, JPEG_SCAN_BYTES);
  while (at + 4 <= end) {
    if (b[at] !== 0xff) return corrupt('jpeg', `no marker at byte ${at}`);
    const marker = b[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    // Markers without a length: TEM, RSTn, SOI, EOI.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd9)) {
      at += 2;
      continue;
    }
    const len = b.readUInt16BE(at + 2);
    // SOF0..SOF15, but DHT (C4), JPG (C8) and DAC (CC) share the range.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (at + 9 > b.length) return corrupt('jpeg', 'the frame header is cut short');
      return sized('jpeg', b.readUInt16BE(at + 7), b.readUInt16BE(at + 5));
    }
    if (marker === 0xda) return corrupt('jpeg', 'scan data before a frame header');
    at += 2 + len;
  }
  return corrupt('jpeg', 'no frame header');
}

function webp(b: Buffer): ImageHeader | ImageProblem {
  if (b.length < 30) return corrupt('webp', 'the first chunk is cut short');
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') return sized('webp', b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff);
  if (chunk === 'VP8L') {
    const bits = b.readUInt32LE(21);
    return sized('webp', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (chunk === 'VP8X') return sized('webp', b.readUIntLE(24, 3) + 1, b.readUIntLE(27, 3) + 1);
  return corrupt('webp', `unknown first chunk ${JSON.stringify(chunk.replace(/[^ -~]/g, '?'))}`);
}

/** The format and declared dimensions of `b`, or why it is not an image this server takes. */
export function readImageHeader(b: Buffer): ImageHeader | ImageProblem {
  if (b.length >= 8 && b.subarray(0, 8).equals(PNG_SIGNATURE)) return png(b);
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return jpeg(b);
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return webp(b);
  const other = b.toString('latin1', 0, 4);
  const named = other.startsWith('GIF8') ? 'gif' : other === 'II*\0' || other === 'MM\0*' ? 'tiff' : null;
  if (named !== null)
    return { reason: 'unsupported_format', message: `image format ${named} is not taken (send JPEG, PNG or WebP)` };
  return { reason: 'not_an_image', message: 'the body is not an image (send JPEG, PNG or WebP bytes)' };
}
