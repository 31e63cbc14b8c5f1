/**
 * A small YAML writer for the generated rule files (js-yaml lives behind the loader's adapter):
 * mappings, sequences of mappings, strings and numbers. A string is written plain when YAML
 * reads it back unchanged, else double-quoted with JSON's escapes (valid YAML).
 */

/** What the writer accepts. */
export type YamlValue = string | number | readonly YamlValue[] | { readonly [k: string]: YamlValue };

const INDICATORS = /^[-?:,[\]{}#&*!|>'"%@`]/;
const PLAIN_WORDS = /^(true|false|yes|no|on|off|null|~|y|n)$/i;

/** Whether `s` can be written as a plain scalar (no quoting). */
export function isPlain(s: string): boolean {
  return (
    s !== '' &&
    !INDICATORS.test(s) &&
    !s.includes(': ') &&
    !s.includes(' #') &&
    !s.endsWith(':') &&
    !/[\n\t]/.test(s) &&
    s.trim() === s &&
    !PLAIN_WORDS.test(s) &&
    Number.isNaN(Number(s))
  );
}

function scalar(v: string | number): string {
  if (typeof v === 'number') return String(v);
  return isPlain(v) ? v : JSON.stringify(v);
}

function lines(v: YamlValue, indent: string): string[] {
  if (typeof v === 'string' || typeof v === 'number') return [indent + scalar(v)];
  if (Array.isArray(v)) {
    const out: string[] = [];
    for (const item of v as readonly YamlValue[]) {
      const inner = lines(item, indent + '  ');
      out.push(indent + '- ' + (inner[0] as string).slice(indent.length + 2), ...inner.slice(1));
    }
    return out;
  }
  const out: string[] = [];
  for (const [k, val] of Object.entries(v as { readonly [k: string]: YamlValue })) {
    if (typeof val === 'string' || typeof val === 'number') out.push(`${indent}${k}: ${scalar(val)}`);
    else if (Array.isArray(val) && val.length === 0) out.push(`${indent}${k}: []`);
    else out.push(`${indent}${k}:`, ...lines(val, indent + '  '));
  }
  return out;
}

/** The YAML text of `doc`, with a leading comment block (each line prefixed `# `). */
export function toYaml(doc: YamlValue, comment: readonly string[] = []): string {
  return [...comment.map((c) => (c === '' ? '#' : `# ${c}`)), ...lines(doc, '')].join('\n') + '\n';
}
