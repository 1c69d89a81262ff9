// The probes' results as mining/core/causal.py's docstrings give them (the contract: the
// schema types `result` as an object only). Layers are 1-based; a key is [layer, index].
// Each result also carries `key_ids`, "layer:index" → the study's key id of each key it
// names that was mined in the study (mining/causal.py, key_ids).

export type KeyPair = [number, number];
export type KeyIds = Readonly<Record<string, number>>;

/** A mean and its percentile-bootstrap 95% interval; null where no example counts. */
export interface Interval {
  mean: number;
  low: number;
  high: number;
}

/** The keys ablated beside as many random keys of the same layers. */
export interface Paired {
  ablated: Interval | null;
  control: Interval | null;
}

export interface AblationKeyRow extends Paired {
  key: KeyPair;
  n: number;
  /** The change of log p of the key's value top token (argmax of v_i·E) on its own prefixes. */
  value_top: Paired & { token: number; text: string };
}

export interface AblationSet {
  n: number;
  overall: Paired & { n: number };
  layers: (Paired & { layer: number; n: number })[];
  keys: AblationKeyRow[];
}

export interface AblationResult {
  format: string;
  model: string;
  scale: number;
  seed: number;
  replicates: number;
  keys: KeyPair[];
  control_keys: KeyPair[];
  /** "own" (the keys' own trigger prefixes; absent when they have none) and "random". */
  sets: Record<string, AblationSet>;
  key_ids: KeyIds;
}

export interface DissociationResult {
  format: string;
  model: string;
  scale: number;
  seed: number;
  replicates: number;
  groups: { a: KeyPair[]; b: KeyPair[] };
  n: { p: number; q: number };
  /** The mean loss change −Δ log p of ablating each group on each prefix set. */
  table: {
    a: { p: Interval | null; q: Interval | null };
    b: { p: Interval | null; q: Interval | null };
  };
  /**
   * (A on P − A on Q) − (B on P − B on Q). This, the two differences and a table cell are
   * null where a change is not finite (a probability of 0 in float32).
   */
  interaction: (Interval & { sign: number; excludes_zero: boolean }) | null;
  a_p_minus_a_q: Interval | null;
  b_q_minus_b_p: Interval | null;
  double_dissociation: boolean;
  key_ids: KeyIds;
}

export const TRACE_KINDS = ['hidden', 'mlp', 'attn'] as const;
export type TraceKind = (typeof TRACE_KINDS)[number];

export interface TracePeak {
  layer: number;
  token: number;
  effect: number;
}

export interface TraceResult {
  format: string;
  model: string;
  prompt: string;
  subject: string;
  answer: string;
  answer_id: number;
  answer_token: string;
  tokens: string[];
  /** [start, end): the subject's token indices. */
  subject_span: [number, number];
  last_subject: number;
  noise: number;
  noise_std: number;
  samples: number;
  window: number;
  seed: number;
  p_clean: number;
  p_corrupted: number;
  /** Per kind, [layers][tokens] indirect effects: row i is layer i + 1. */
  effects: Record<TraceKind, number[][]>;
  peaks: Record<TraceKind, TracePeak>;
  /** The strongest keys at the MLP site of largest effect at the last subject token. */
  keys: TracePeak & { top: { layer: number; index: number; score: number; m: number }[] };
  key_ids: KeyIds;
}

export interface AttributionPrompt {
  prompt: string;
  answer_id: number;
  answer_token: string;
  p: number;
  max_attribution: number;
  top: { layer: number; index: number; attribution: number }[];
  kept: KeyPair[];
  completeness: { layer: number; sum: number; f_full: number; f_baseline: number }[];
}

export interface AttributionEffect {
  /** The mean relative change of p(answer) over the prompts. */
  selected: number;
  /** null where there is no control (see `control_note`). */
  control: number | null;
  per_prompt: { selected: number[]; control: number[] | null };
}

export interface AttributionResult {
  format: string;
  model: string;
  answer: string;
  steps: number;
  threshold: number;
  share: number;
  seed: number;
  layers: number[];
  prompts: AttributionPrompt[];
  selected: KeyPair[];
  control_keys: KeyPair[];
  /** null when no key was selected. */
  effects: { suppress: AttributionEffect; amplify: AttributionEffect } | null;
  /**
   * Why the controls are null: over half of a layer's keys were selected, so no random group
   * of the same layers is as large ("control_keys" is then empty).
   */
  control_note?: string | null;
  key_ids: KeyIds;
}

export const FORMATS = {
  ablation: 'ffkv.causal.ablation/v1',
  dissociation: 'ffkv.causal.dissociation/v1',
  tracing: 'ffkv.causal.trace/v1',
  attribution: 'ffkv.causal.attribution/v1',
} as const;

export type CausalResult =
  | { kind: 'ablation'; result: AblationResult }
  | { kind: 'dissociation'; result: DissociationResult }
  | { kind: 'tracing'; result: TraceResult }
  | { kind: 'attribution'; result: AttributionResult };

/**
 * A done job's result as the view of its kind reads it, or null when its `format` is not
 * the one this page knows (a newer server, a result stored by another version).
 */
export function readResult(kind: string, result: Record<string, unknown>): CausalResult | null {
  if (!Object.hasOwn(FORMATS, kind)) return null;
  const known = kind as keyof typeof FORMATS;
  if (result.format !== FORMATS[known]) return null;
  const withIds = { key_ids: {}, ...result };
  return { kind: known, result: withIds } as unknown as CausalResult;
}

/** "3:400": how `key_ids` names a key. */
export function keyName(layer: number, index: number): string {
  return `${layer}:${index}`;
}

/** The study's id of a key the result names, or null where the key was not mined there. */
export function keyIdOf(keyIds: KeyIds, layer: number, index: number): number | null {
  const id = keyIds[keyName(layer, index)];
  return typeof id === 'number' ? id : null;
}
