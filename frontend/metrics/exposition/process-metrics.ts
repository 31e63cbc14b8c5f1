/**
 * Node process and runtime metrics (prom-client's default metrics) — the only file that imports
 * prom-client. They live in their own Registry and are read through its public
 * `getMetricsAsJSON()`, then rendered by our renderers after the declared families.
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import { labelPairs } from './escape.js';
import type { ForeignFamily, ForeignSample } from './foreign-family.js';

type LabelSet = Readonly<Record<string, string | number>>;

/**
 * The process metrics of other processes of the same server (the front processes of
 * `--api-server-count N`), each sample already carrying its process's `pid` label.
 */
export type ProcessPeers = () => Promise<readonly ForeignFamily[]>;

/** prom-client's process and Node.js runtime metrics, as foreign families. */
export class ProcessMetrics {
  private readonly registry = new Registry();
  /** `pid="N"` on every own sample when peers exist (one series per process), else nothing. */
  private pidLabel: LabelSet = {};
  private peers: ProcessPeers | null = null;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** From now on, own samples carry `pid` and the peers' families render with them. */
  withPeers(peers: ProcessPeers): void {
    this.pidLabel = { pid: process.pid };
    this.peers = peers;
  }

  /** Every family now (the peers' samples merged in by family). */
  async families(): Promise<ForeignFamily[]> {
    const out: ForeignFamily[] = [];
    for (const m of await this.registry.getMetricsAsJSON()) {
      const samples: ForeignSample[] = [];
      for (const v of m.values) {
        const val = v as { labels?: LabelSet; sharedLabels?: LabelSet; metricName?: string; value: number };
        samples.push({
          name: val.metricName ?? m.name,
          block: block({ ...val.labels, ...this.pidLabel }, val.sharedLabels ?? {}),
          value: val.value,
        });
      }
      out.push({ name: m.name, help: m.help, type: String(m.type), samples });
    }
    if (this.peers === null) return out;
    const byName = new Map(out.map((f) => [f.name, f]));
    for (const f of await this.peers()) {
      const own = byName.get(f.name);
      if (own === undefined) {
        byName.set(f.name, f);
        out.push(f);
      } else (own.samples as ForeignSample[]).push(...f.samples);
    }
    return out;
  }
}

/** `{own labels, then shared ones}` as prom-client orders them (a histogram's `le` first). */
function block(labels: LabelSet, shared: LabelSet): string {
  const names: string[] = [];
  const values: string[] = [];
  for (const [k, v] of Object.entries(labels)) {
    if (Object.prototype.hasOwnProperty.call(shared, k)) continue;
    names.push(k);
    values.push(String(v));
  }
  for (const [k, v] of Object.entries(shared)) {
    names.push(k);
    values.push(String(v));
  }
  return names.length === 0 ? '' : '{' + labelPairs(names, values) + '}';
}
