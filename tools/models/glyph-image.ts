/**
 * Text-like test images without fonts: words drawn from a 5×7 bitmap font into an RGB pixel
 * buffer (dark strokes on a light page), upright or turned 180°, for the image classifier's tests and bench:image.
 */

/** 5×7 glyphs, one string of 5 columns per row ('#' is ink). */
const FONT: Readonly<Record<string, readonly string[]>> = {
  A: [' ### ', '#   #', '#   #', '#####', '#   #', '#   #', '#   #'],
  B: ['#### ', '#   #', '#   #', '#### ', '#   #', '#   #', '#### '],
  C: [' ### ', '#   #', '#    ', '#    ', '#    ', '#   #', ' ### '],
  D: ['#### ', '#   #', '#   #', '#   #', '#   #', '#   #', '#### '],
  E: ['#####', '#    ', '#    ', '#### ', '#    ', '#    ', '#####'],
  F: ['#####', '#    ', '#    ', '#### ', '#    ', '#    ', '#    '],
  H: ['#   #', '#   #', '#   #', '#####', '#   #', '#   #', '#   #'],
  L: ['#    ', '#    ', '#    ', '#    ', '#    ', '#    ', '#####'],
  P: ['#### ', '#   #', '#   #', '#### ', '#    ', '#    ', '#    '],
  R: ['#### ', '#   #', '#   #', '#### ', '# #  ', '#  # ', '#   #'],
  T: ['#####', '  #  ', '  #  ', '  #  ', '  #  ', '  #  ', '  #  '],
  Y: ['#   #', '#   #', ' # # ', '  #  ', '  #  ', '  #  ', '  #  '],
  a: ['     ', '     ', ' ### ', '    #', ' ####', '#   #', ' ####'],
  b: ['#    ', '#    ', '#### ', '#   #', '#   #', '#   #', '#### '],
  d: ['    #', '    #', ' ####', '#   #', '#   #', '#   #', ' ####'],
  e: ['     ', '     ', ' ### ', '#   #', '#####', '#    ', ' ### '],
  h: ['#    ', '#    ', '#### ', '#   #', '#   #', '#   #', '#   #'],
  k: ['#    ', '#    ', '#  # ', '# #  ', '##   ', '# #  ', '#  # '],
  l: [' ##  ', '  #  ', '  #  ', '  #  ', '  #  ', '  #  ', ' ### '],
  o: ['     ', '     ', ' ### ', '#   #', '#   #', '#   #', ' ### '],
  p: ['     ', '     ', '#### ', '#   #', '#### ', '#    ', '#    '],
  r: ['     ', '     ', '# ## ', '##  #', '#    ', '#    ', '#    '],
  t: [' #   ', ' #   ', '#### ', ' #   ', ' #   ', ' #  #', '  ## '],
  y: ['     ', '     ', '#   #', '#   #', ' ####', '    #', ' ### '],
  ' ': ['     ', '     ', '     ', '     ', '     ', '     ', '     '],
};

/** An RGB image: `width × height × 3` bytes. */
export interface RgbImage {
  readonly data: Buffer;
  readonly width: number;
  readonly height: number;
}

/**
 * `text` drawn at `scale` pixels per font dot, with a margin of one glyph height above and below;
 * `turned` rotates the whole page 180°. Unknown characters are drawn as spaces.
 */
export function textImage(text: string, scale: number, turned = false): RgbImage {
  const cell = 6 * scale;
  const width = (text.length + 2) * cell;
  const height = 7 * scale * 2;
  const data = Buffer.alloc(width * height * 3, 235);
  const top = Math.floor((height - 7 * scale) / 2);
  for (let i = 0; i < text.length; i++) {
    const glyph = FONT[text[i]!] ?? FONT[' ']!;
    for (let gy = 0; gy < 7; gy++)
      for (let gx = 0; gx < 5; gx++) {
        if (glyph[gy]![gx] !== '#') continue;
        for (let dy = 0; dy < scale; dy++)
          for (let dx = 0; dx < scale; dx++) {
            let x = cell + i * cell + gx * scale + dx;
            let y = top + gy * scale + dy;
            if (turned) {
              x = width - 1 - x;
              y = height - 1 - y;
            }
            data.fill(20, (y * width + x) * 3, (y * width + x) * 3 + 3);
          }
      }
  }
  return { data, width, height };
}
