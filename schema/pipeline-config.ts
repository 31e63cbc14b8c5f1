/**
 * The `pipeline:` block of a `handler: pipeline` model-config (vLLM-Omni's stage list): ordered
 * stages, each a model directory of the same store with its own replica count, and how many
 * codec tokens the thinker hands to the next stage per chunk. Validated once, when the model
 * is registered; every problem is reported at once.
 */

/** One stage: a model of the store run by `replicas` workers. */
export interface PipelineStageSpec {
  /** The stage's label value (`stage="thinker"`). */
  readonly name: string;
  /** A model directory of the same store (e.g. `tiny-lm`). */
  readonly model: string;
  /** Workers of this stage; each request is bound to one of them (sticky). */
  readonly replicas: number;
}

/**
 * A stage's model-config as the frontend read it (asynchronously) before the pipeline is built;
 * `C` is the config type (worker-protocol.ts's ModelConfig, which imports this file: a parameter
 * keeps the two files out of an import cycle).
 */
export type StageConfigResult<C> =
  { readonly ok: true; readonly config: C } | { readonly ok: false; readonly problems: readonly string[] };

/** A validated pipeline: a `generate` thinker, then a `vocoder` stage (`C`: its stages' config type). */
export interface PipelineSpec<C = never> {
  readonly stages: readonly PipelineStageSpec[];
  /** Each stage's model-config, in stage order: filled in when the pipeline's own config is loaded. */
  readonly stageConfigs?: readonly StageConfigResult<C>[];
  /** Codec tokens per chunk sent from the thinker to the next stage (the last chunk may be shorter). */
  readonly chunkTokens: number;
}

/** The workers a pipeline runs: one per replica of each stage (what `--max-workers` counts). */
export function pipelineWorkers(pipeline: PipelineSpec<unknown>): number {
  let n = 0;
  for (const s of pipeline.stages) n += s.replicas;
  return n;
}

/** Default tokens per chunk: 4 tokens = 160 ms of audio with the tiny vocoder. */
export const DEFAULT_CHUNK_TOKENS = 4;

const STAGE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Validates a `pipeline:` block; `problems` gets one line per problem (`pipeline.<key>: …`). */
export function parsePipelineSpec(raw: unknown, problems: string[]): PipelineSpec | undefined {
  const bad = (key: string, msg: string): undefined => {
    problems.push(`pipeline.${key}: ${msg}`);
    return undefined;
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return bad('', 'must be a mapping with stages: [...]');
  const doc = raw as Readonly<Record<string, unknown>>;
  const before = problems.length;
  for (const k of Object.keys(doc))
    if (k !== 'stages' && k !== 'chunkTokens') bad(k, 'unknown key (known: stages, chunkTokens)');
  const chunk = doc.chunkTokens ?? DEFAULT_CHUNK_TOKENS;
  if (typeof chunk !== 'number' || !Number.isInteger(chunk) || chunk < 1)
    bad('chunkTokens', `must be an integer >= 1 (got ${JSON.stringify(chunk)})`);
  if (!Array.isArray(doc.stages) || doc.stages.length !== 2)
    return bad('stages', 'must list exactly two stages: a thinker (handler generate) and a code2wav (handler vocoder)');
  const stages: PipelineStageSpec[] = [];
  const seen = new Set<string>();
  (doc.stages as unknown[]).forEach((s, i) => {
    if (typeof s !== 'object' || s === null || Array.isArray(s))
      return bad(`stages[${i}]`, 'must be a mapping {name, model, replicas}');
    const st = s as Readonly<Record<string, unknown>>;
    for (const k of Object.keys(st))
      if (k !== 'name' && k !== 'model' && k !== 'replicas')
        bad(`stages[${i}].${k}`, 'unknown key (known: name, model, replicas)');
    const name = st.name;
    if (typeof name !== 'string' || !STAGE_NAME_RE.test(name))
      return bad(`stages[${i}].name`, `must be letters, digits, '_', '.', '-' (got ${JSON.stringify(name)})`);
    if (seen.has(name)) return bad(`stages[${i}].name`, `duplicate stage name '${name}'`);
    seen.add(name);
    const model = st.model;
    if (typeof model !== 'string' || !STAGE_NAME_RE.test(model))
      return bad(`stages[${i}].model`, `must name a model directory of the store (got ${JSON.stringify(model)})`);
    const replicas = st.replicas ?? 1;
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 1)
      return bad(`stages[${i}].replicas`, `must be an integer >= 1 (got ${JSON.stringify(replicas)})`);
    stages.push(Object.freeze({ name, model, replicas }));
    return undefined;
  });
  if (problems.length > before) return undefined;
  return Object.freeze({ stages: Object.freeze(stages), chunkTokens: chunk as number });
}
