/**
 * A chart's SVG polyline points: the last points scaled into a `W`×`H` box, with the value axis
 * from 0 to the largest value (gaps, null values, break the line into several polylines). The
 * page's script (status-assets.ts) draws the same way from the JSON it polls.
 */
import type { ChartPoints } from './status-snapshot.js';

/** The viewBox of every chart. */
export const CHART_W = 300;
export const CHART_H = 100;

/** The `points` attribute of each run of non-null points, and the scale's top value. */
export function chartLines(points: ChartPoints): { lines: string[]; max: number } {
  let max = 0;
  for (const [, v] of points) if (v !== null && v > max) max = v;
  const top = max > 0 ? max : 1;
  if (points.length === 0) return { lines: [], max };
  const t0 = points[0]![0];
  const span = Math.max(1, points[points.length - 1]![0] - t0);
  const lines: string[] = [];
  let cur: string[] = [];
  for (const [t, v] of points) {
    if (v === null) {
      if (cur.length > 0) lines.push(cur.join(' '));
      cur = [];
      continue;
    }
    const x = ((t - t0) / span) * CHART_W;
    const y = CHART_H - (v / top) * (CHART_H - 4) - 2;
    cur.push(`${x.toFixed(1)},${y.toFixed(1)}`);
  }
  if (cur.length > 0) lines.push(cur.join(' '));
  return { lines, max };
}

/** A number as the page shows it: up to 4 significant digits, small values in ms for seconds. */
export function formatValue(v: number | null, unit: string): string {
  if (v === null) return '–';
  if (unit === 's') return v < 1 ? `${(v * 1000).toPrecision(3)} ms` : `${v.toPrecision(3)} s`;
  if (unit === 'ratio') return `${(v * 100).toFixed(1)} %`;
  const s = Math.abs(v) >= 1000 ? v.toFixed(0) : Number(v.toPrecision(4)).toString();
  return unit === '' ? s : `${s} ${unit}`;
}
