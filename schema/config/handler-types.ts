/**
 * `tsserve metrics types`: a `.d.ts` written from a metrics.yaml that types a handler's
 * `context.metrics` by the yaml's model metrics, so an unknown name, a dimension missing or too
 * many, or another type than the declared one is a TypeScript error in the handler's editor.
 * The file is self-contained (no import): a handler outside this repo can use it as it is.
 */
import type { MetricsConfig } from '../types.js';

/** The helpers fill these in when a metric declares them (TorchServe), so a handler may leave them out. */
const HELPER_DEFAULTS = ['ModelName', 'Level'] as const;

/** The shared part of every generated file: the API typed by `DeclaredModelMetrics`. */
const API = `/** A declared model metric's name. */
export type ModelMetricName = keyof DeclaredModelMetrics;
/** The declared type of metric \`N\`. */
export type MetricTypeOf<N extends ModelMetricName> = DeclaredModelMetrics[N]['type'];
/** The declared dimension names of metric \`N\`, as a union. */
export type DimensionOf<N extends ModelMetricName> = DeclaredModelMetrics[N]['dimensions'][number];
/** Metric \`N\`'s dimension names as addMetric takes them: as many as declared, in any order. */
export type DimensionNamesOf<N extends ModelMetricName> = Each<DeclaredModelMetrics[N]['dimensions'], DimensionOf<N>>;
/** A tuple as long as \`T\` of \`V\`s. */
type Each<T extends readonly string[], V> = { readonly [K in keyof T]: V };
/** The values of metric \`N\`'s dimensions: every declared one by name, or a list in the declared order. */
export type ValuesOf<N extends ModelMetricName> = [DimensionOf<N>] extends [never]
  ? readonly [] | { readonly [name: string]: never }
  : { readonly [D in DimensionOf<N>]: string } | Each<DeclaredModelMetrics[N]['dimensions'], string>;
/** Whether metric \`N\` declares no dimension (then its values may be left out). */
type NoDimensions<N extends ModelMetricName> = [DimensionOf<N>] extends [never] ? true : false;
/** The arguments after the value of \`addOrUpdate\` (and of \`bind\`, without the id). */
export type RecordArgs<N extends ModelMetricName> =
  NoDimensions<N> extends true
    ? [dimensionValues?: ValuesOf<N>, requestId?: string]
    : [dimensionValues: ValuesOf<N>, requestId?: string];
/** The arguments after the value of TorchServe's \`update(value, requestId, dimensions)\`. */
export type UpdateArgs<N extends ModelMetricName> =
  NoDimensions<N> extends true
    ? [requestId?: string, dimensionValues?: ValuesOf<N>]
    : [requestId: string | undefined, dimensionValues: ValuesOf<N>];
/** The dimensions a helper takes for metric \`N\`: every declared one, ModelName and Level optional. */
export type HelperDimensionsOf<N extends ModelMetricName> = {
  readonly [D in Exclude<DimensionOf<N>, ${HELPER_DEFAULTS.map((d) => `'${d}'`).join(' | ')}>]: string;
} & { readonly [D in Extract<DimensionOf<N>, ${HELPER_DEFAULTS.map((d) => `'${d}'`).join(' | ')}>]?: string };
/** The names of the declared counters (what \`addCounter\` records into). */
export type CounterName = { [N in ModelMetricName]: MetricTypeOf<N> extends 'counter' ? N : never }[ModelMetricName];

/** A series bound once: \`record\` is the cheapest record call. */
export interface ModelSeries {
  record(value: number, requestId?: string): void;
}

/** A declared model metric as \`addMetric\` and \`getMetric\` return it. */
export interface ModelMetric<N extends ModelMetricName> {
  readonly name: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly unit: string;
  readonly dimensions: readonly string[];
  addOrUpdate(value: number, ...args: RecordArgs<N>): void;
  update(value: number, ...args: UpdateArgs<N>): void;
  bind(
    ...args: NoDimensions<N> extends true ? [dimensionValues?: ValuesOf<N>] : [dimensionValues: ValuesOf<N>]
  ): ModelSeries;
}

/** \`context.metrics\` typed by metrics.yaml: \`const metrics: ModelMetrics = context.metrics;\` */
export interface ModelMetrics {
  readonly dropped: Readonly<Record<string, number>>;
  readonly autoLabels: Readonly<Record<string, string>>;
  records(name: string): boolean;
  addMetric<N extends ModelMetricName>(
    name: N,
    unit: string,
    dimensionNames?: DimensionNamesOf<N>,
    type?: MetricTypeOf<N>,
  ): ModelMetric<N>;
  getMetric<N extends ModelMetricName>(name: N, type?: MetricTypeOf<N>): ModelMetric<N>;
  addCounter<N extends CounterName>(
    name: N,
    value: number,
    requestId?: string | number,
    dimensions?: HelperDimensionsOf<N>,
  ): void;
  addTime<N extends ModelMetricName>(
    name: N,
    value: number,
    requestId?: string | number,
    unit?: 'ms' | 's',
    dimensions?: HelperDimensionsOf<N>,
    type?: MetricTypeOf<N>,
  ): void;
  addSize<N extends ModelMetricName>(
    name: N,
    value: number,
    requestId?: string | number,
    unit?: 'B' | 'kB' | 'MB' | 'GB',
    dimensions?: HelperDimensionsOf<N>,
    type?: MetricTypeOf<N>,
  ): void;
  addPercent<N extends ModelMetricName>(
    name: N,
    value: number,
    requestId?: string | number,
    dimensions?: HelperDimensionsOf<N>,
    type?: MetricTypeOf<N>,
  ): void;
}
`;

/** With auto-detect on, an undeclared name is accepted too (the worker registers it), so typos are not caught. */
const AUTO_DETECT = `
/** Values of an auto-detected metric's dimensions: a list in the order first used, or by name. */
export type UndeclaredValues = readonly string[] | Readonly<Record<string, string>>;

/** An auto-detected metric: its dimensions are the ones of its first use. */
export interface UndeclaredMetric {
  readonly name: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly unit: string;
  readonly dimensions: readonly string[];
  addOrUpdate(value: number, dimensionValues?: UndeclaredValues, requestId?: string): void;
  update(value: number, requestId?: string, dimensionValues?: UndeclaredValues): void;
  bind(dimensionValues?: UndeclaredValues): ModelSeries;
}

/** \`model_metrics_auto_detect: true\`: names the yaml does not declare are registered from their first use. */
export interface ModelMetrics {
  addMetric(
    name: string,
    unit: string,
    dimensionNames?: readonly string[],
    type?: 'counter' | 'gauge' | 'histogram',
  ): UndeclaredMetric;
  addCounter(
    name: string,
    value: number,
    requestId?: string | number,
    dimensions?: Readonly<Record<string, string>>,
  ): void;
  addTime(
    name: string,
    value: number,
    requestId?: string | number,
    unit?: 'ms' | 's',
    dimensions?: Readonly<Record<string, string>>,
    type?: 'counter' | 'gauge' | 'histogram',
  ): void;
  addSize(
    name: string,
    value: number,
    requestId?: string | number,
    unit?: 'B' | 'kB' | 'MB' | 'GB',
    dimensions?: Readonly<Record<string, string>>,
    type?: 'counter' | 'gauge' | 'histogram',
  ): void;
  addPercent(
    name: string,
    value: number,
    requestId?: string | number,
    dimensions?: Readonly<Record<string, string>>,
    type?: 'counter' | 'gauge' | 'histogram',
  ): void;
}
`;

/** A string literal as Prettier writes it: single quotes, double ones when that escapes fewer. */
function quote(s: string): string {
  const q = (s.match(/'/g)?.length ?? 0) > (s.match(/"/g)?.length ?? 0) ? '"' : "'";
  return `${q}${s.replace(/\\/g, '\\\\').replaceAll(q, `\\${q}`)}${q}`;
}

/** A property name: bare when it is an identifier (`Requests2XX`), quoted when not (`a:b`). */
function key(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : quote(name);
}

/** The `.d.ts` for `config`'s model metrics; `source` names the yaml in the header. */
export function renderHandlerTypes(config: MetricsConfig, source: string): string {
  const lines = config.metrics
    .filter((m) => m.section === 'model_metrics')
    .map(
      (m) =>
        `  readonly ${key(m.name)}: {\n    readonly type: '${m.type}';\n    readonly unit: ${quote(m.unit)};\n` +
        `    readonly dimensions: readonly [${m.dimensions.map(quote).join(', ')}];\n  };`,
    );
  return (
    `// Generated by \`tsserve metrics types\` from ${source}: do not edit, run it again after changing the yaml.\n` +
    `// A handler types its metrics with it: \`const metrics: ModelMetrics = context.metrics;\`\n\n` +
    `/** The model metrics ${source} declares: type, unit and dimensions (the server adds Hostname). */\n` +
    `export interface DeclaredModelMetrics {\n${lines.join('\n')}${lines.length > 0 ? '\n' : ''}}\n\n` +
    API +
    (config.autoDetect ? AUTO_DETECT : '')
  );
}
