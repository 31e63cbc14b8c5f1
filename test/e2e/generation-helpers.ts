/**
 * Helpers of the generation e2e tests: a model store holding tiny-lm under several engine
 * settings (copies of the CLI-generated model), a Prometheus text reader that matches series
 * by a label subset, and the `openai` client pointed at the server.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import OpenAI from 'openai';
import { generateStore, scrape } from './harness.js';
import type { Tsserve } from './harness.js';

/** Writes `dir/<name>/` for each variant: tiny-lm's files (chat template included) with its engine settings overridden. */
export function tinyLmVariants(
  dir: string,
  variants: Readonly<Record<string, Readonly<Record<string, unknown>>>>,
): string {
  const src = path.join(generateStore(['tiny-lm']), 'tiny-lm');
  const cfg = yaml.load(fs.readFileSync(path.join(src, 'model-config.yaml'), 'utf8')) as Record<string, unknown>;
  for (const [name, engine] of Object.entries(variants)) {
    const to = path.join(dir, name);
    fs.mkdirSync(to, { recursive: true });
    // Every file (the model, its chat template) but the config, written with the variant's engine.
    for (const f of fs.readdirSync(src))
      if (f !== 'model-config.yaml') fs.copyFileSync(path.join(src, f), path.join(to, f));
    const c = { ...cfg, engine: { ...(cfg.engine as Record<string, unknown>), ...engine } };
    fs.writeFileSync(path.join(to, 'model-config.yaml'), yaml.dump(c));
  }
  return dir;
}

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Parsed sample lines of a Prometheus text exposition. */
export function parseSamples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)/.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

/** One scrape, read by name and a label subset (the sum over matching series; 0 when none). */
export class Scrape {
  private constructor(private readonly samples: readonly Sample[]) {}

  static async of(server: Tsserve): Promise<Scrape> {
    return new Scrape(parseSamples(await scrape(server)));
  }

  get(name: string, labels: Readonly<Record<string, string>> = {}): number {
    let sum = 0;
    for (const s of this.samples) {
      if (s.name !== name) continue;
      if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
    }
    return sum;
  }

  /** True when a series of `name` with `labels` is present. */
  has(name: string, labels: Readonly<Record<string, string>> = {}): boolean {
    return this.samples.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  }
}

/** after − before for one series. */
export function delta(before: Scrape, after: Scrape, name: string, labels: Readonly<Record<string, string>>): number {
  return after.get(name, labels) - before.get(name, labels);
}

/** The official client against the server's /v1 (no retries: every request is counted). */
export function openaiClient(server: Tsserve): OpenAI {
  return new OpenAI({ baseURL: `${server.inference}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
}

/** vLLM's extension parameters the client's types do not know. */
export interface VllmExtras {
  readonly ignore_eos?: boolean;
  readonly top_k?: number;
}
