/**
 * One benchmark figure as the line every bench prints:
 * `{"bench","ours","baseline","unit","ratio"}` (ours and baseline to 0.1, the ratio to 0.001),
 * with `extra` fields after them (`better: 'lower'`, a core count).
 */
export function printFigure(bench: string, ours: number, baseline: number, unit: string, extra: object = {}): void {
  process.stdout.write(
    JSON.stringify({
      bench,
      ours: Math.round(ours * 10) / 10,
      baseline: Math.round(baseline * 10) / 10,
      unit,
      ratio: Math.round((ours / baseline) * 1000) / 1000,
      ...extra,
    }) + '\n',
  );
}
