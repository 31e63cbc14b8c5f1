/**
 * Command-line flags on node's `util.parseArgs`, for every `tsserve` command: unknown flags are
 * errors naming the nearest known flag, `list` flags take repeated, space-separated and
 * comma-separated values, and `TS_<NAME>` env vars fill what the command line leaves out.
 */
import { parseArgs } from 'util';

/** One flag: its name without `--`, its kind, and an optional one-letter alias. */
export interface FlagDef {
  readonly flag: string;
  readonly kind: 'string' | 'list' | 'bool' | 'int';
  readonly short?: string;
}

/** What the command line gave: values per flag (in order), positionals, and `--help`. */
export interface GivenFlags {
  readonly values: ReadonlyMap<string, readonly string[]>;
  readonly positionals: readonly string[];
  readonly help: boolean;
}

/** What was given (unknown flags and stray words left out), and every problem found. */
export interface FlagsResult {
  readonly given: GivenFlags;
  readonly problems: readonly string[];
}

/** Levenshtein distance (small strings: flag names). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_v, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** The known name nearest to `word`, when close enough to be a likely typo (distance ≤ max(2, len/3)). */
export function nearest(word: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const k of known) {
    const d = editDistance(word, k);
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  return bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : null;
}

/** The `unknown option` problem, with the nearest known flag when there is one. */
export function unknownOption(raw: string, defs: readonly FlagDef[], command: string): string {
  const name = raw.replace(/^-+/, '');
  const near = nearest(name, ['help', ...defs.map((d) => d.flag)]);
  return near !== null
    ? `unknown option '${raw}'; did you mean '--${near}'?`
    : `unknown option '${raw}' (see ${command} --help)`;
}

/**
 * Parses `argv` against `defs`. `positionals`: how many bare arguments the command takes
 * (`Infinity` for a list); bare words right after a `list` flag are that flag's values.
 */
export function parseFlags(
  argv: readonly string[],
  defs: readonly FlagDef[],
  command: string,
  positionals = 0,
): FlagsResult {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const d of defs) {
    options[d.flag] = {
      type: d.kind === 'bool' ? 'boolean' : 'string',
      multiple: true,
      ...(d.short !== undefined ? { short: d.short } : {}),
    };
  }
  // Non-strict: parseArgs reports every token, and we word the problems ourselves.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const problems: string[] = [];
  const values = new Map<string, string[]>();
  const pos: string[] = [];
  let help = false;
  let listFlag: string | null = null; // bare words after a list flag belong to it
  let unknownValue = false; // the word after an unknown flag is its value, not a stray argument
  for (const t of tokens) {
    if (t.kind === 'option-terminator') {
      listFlag = null;
      unknownValue = false;
      continue;
    }
    if (t.kind === 'positional') {
      if (unknownValue) unknownValue = false;
      else if (listFlag !== null) values.get(listFlag)!.push(...t.value.split(',').filter((s) => s !== ''));
      else if (pos.length < positionals) pos.push(t.value);
      else problems.push(`unexpected argument '${t.value}'`);
      continue;
    }
    listFlag = null;
    unknownValue = false;
    if (t.name === 'help') {
      help = true;
      continue;
    }
    const def = defs.find((d) => d.flag === t.name);
    if (def === undefined) {
      problems.push(unknownOption(t.rawName, defs, command));
      unknownValue = t.inlineValue !== true;
      continue;
    }
    const got = values.get(def.flag) ?? [];
    values.set(def.flag, got);
    if (def.kind === 'bool') {
      got.push(t.value ?? 'true');
      continue;
    }
    if (t.value === undefined) {
      problems.push(`--${def.flag} needs a value`);
      continue;
    }
    if (def.kind === 'list') {
      got.push(...t.value.split(',').filter((s) => s !== ''));
      listFlag = def.flag;
    } else got.push(t.value);
  }
  return { given: { values, positionals: pos, help }, problems };
}

/** The env var of a flag: `TS_` and the flag in upper snake case (`--metrics-mode` → `TS_METRICS_MODE`). */
export function envName(flag: string): string {
  return `TS_${flag.replace(/-/g, '_').toUpperCase()}`;
}
