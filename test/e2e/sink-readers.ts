/**
 * Reading what the sinks wrote, for e2e tests that count exactly: the parsed lines of a tslog
 * file, and the samples of an exposition that must never go down.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseTslogLine } from '../../frontend/metrics/sinks/tslog-format.js';
import type { TslogLine } from '../../frontend/metrics/sinks/tslog-format.js';

/** Every line of `logDir/file`, parsed (none while the file does not exist); throws on a line that does not parse. */
export function tslogLines(logDir: string, file: string): TslogLine[] {
  const p = path.join(logDir, file);
  if (!fs.existsSync(p)) return [];
  return fs
    .readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const parsed = parseTslogLine(l);
      if (parsed === null) throw new Error(`line does not parse: ${l}`);
      return parsed;
    });
}

/**
 * Every counter sample of an exposition by series text, and with `histograms` every histogram
 * `_count` and `_bucket` sample too: the samples that never go down.
 */
export function monotonicSamples(text: string, histograms = false): Map<string, number> {
  const types = new Map<string, string>();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t !== null) {
      types.set(t[1]!, t[2]!);
      continue;
    }
    if (line.startsWith('#') || line === '') continue;
    const sp = line.lastIndexOf(' ');
    const series = line.slice(0, sp);
    const name = series.split('{')[0]!;
    const histogram = histograms ? /^(.*)_(count|bucket)$/.exec(name) : null;
    if (types.get(name) === 'counter' || (histogram !== null && types.get(histogram[1]!) === 'histogram'))
      out.set(series, Number(line.slice(sp + 1)));
  }
  return out;
}
