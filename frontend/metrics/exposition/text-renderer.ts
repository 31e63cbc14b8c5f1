/**
 * The Prometheus text format 0.0.4: per family `# HELP`, `# TYPE` and its sample lines, families
 * separated by a blank line (prom-client's layout, kept byte for byte).
 */
import { escapeHelpText, formatValue } from './escape.js';
import type { ForeignFamily } from './foreign-family.js';

/** The content type of the text format. */
export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** `# HELP name help\n# TYPE name type` (no trailing newline). */
export function textHeader(name: string, help: string, type: string): string {
  return '# HELP ' + name + ' ' + escapeHelpText(help) + '\n# TYPE ' + name + ' ' + type;
}

/** A foreign family's block. */
export function textForeign(f: ForeignFamily): string {
  let out = textHeader(f.name, f.help, f.type);
  for (const s of f.samples) out += '\n' + s.name + s.block + ' ' + formatValue(s.value);
  return out;
}

/** The whole exposition from family blocks; '' for none when `filtered`. */
export function textDocument(blocks: readonly string[], filtered: boolean): string {
  if (filtered && blocks.length === 0) return '';
  return blocks.join('\n\n') + '\n';
}
