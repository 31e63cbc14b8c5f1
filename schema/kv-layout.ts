/**
 * Which KV layout a generation model's graph is in, from its input names, and whether it can
 * verify speculative drafts: one rule for the engine's load (backend/engine/load.ts, from the
 * session) and the frontend's model-config check (from the file), so a model the engine would
 * refuse at every load is refused before a worker starts.
 */

/** KV layouts the runners understand: our fast graph, or the usual exported (HF-style) graph. */
export type KvLayout = 'fast' | 'hf';

/** The inputs that tell the layouts apart, and the fast graph's logits-for-N-positions input. */
export const LAYOUT_INPUTS = { fast: 'attn_bias', hf: 'attention_mask', numLogits: 'num_logits' } as const;

/** The layout `configured` names, or under `auto` the one the inputs show; null when they show none. */
export function kvLayoutOf(configured: KvLayout | 'auto', inputNames: readonly string[]): KvLayout | null {
  if (configured !== 'auto') return configured;
  if (inputNames.includes(LAYOUT_INPUTS.fast)) return 'fast';
  if (inputNames.includes(LAYOUT_INPUTS.hf)) return 'hf';
  return null;
}

/** True when a graph returns logits for several positions (fast layout with num_logits): n-gram drafts can be verified. */
export function verifiesDrafts(layout: KvLayout, inputNames: readonly string[]): boolean {
  return layout === 'fast' && inputNames.includes(LAYOUT_INPUTS.numLogits);
}

/** The inputs a layout's runner feeds, for a graph of `numLayers` decoder layers. */
export function requiredInputs(layout: KvLayout, numLayers: number): string[] {
  const per = (f: (l: number) => string): string[] => Array.from({ length: numLayers }, (_, l) => f(l));
  return layout === 'fast'
    ? [
        'input_ids',
        'position_ids',
        LAYOUT_INPUTS.fast,
        ...per((l) => `past_key.${l}`),
        ...per((l) => `past_value.${l}`),
      ]
    : [
        // position_ids is optional: a graph without it derives positions from the mask.
        'input_ids',
        LAYOUT_INPUTS.hf,
        ...per((l) => `past_key_values.${l}.key`),
        ...per((l) => `past_key_values.${l}.value`),
      ];
}

/** The required inputs (requiredInputs) a graph lacks, in order. */
export function missingInputs(layout: KvLayout, numLayers: number, inputNames: readonly string[]): string[] {
  const have = new Set(inputNames);
  return requiredInputs(layout, numLayers).filter((n) => !have.has(n));
}

/** The outputs a layout's runner fetches, for a graph of `numLayers` decoder layers. */
export function requiredOutputs(layout: KvLayout, numLayers: number): string[] {
  const per = (f: (l: number) => string): string[] => Array.from({ length: numLayers }, (_, l) => f(l));
  return layout === 'fast'
    ? ['logits', ...per((l) => `new_key.${l}`), ...per((l) => `new_value.${l}`)]
    : ['logits', ...per((l) => `present.${l}.key`), ...per((l) => `present.${l}.value`)];
}

/** The required outputs (requiredOutputs) a graph lacks, in order. */
export function missingOutputs(layout: KvLayout, numLayers: number, outputNames: readonly string[]): string[] {
  const have = new Set(outputNames);
  return requiredOutputs(layout, numLayers).filter((n) => !have.has(n));
}
