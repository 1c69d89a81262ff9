// The causal probes' API (/api/admin/…/causal/, docs/causal.md): names for its shapes, all
// from the OpenAPI schema (schema.d.ts); the calls are in client.ts. A job's `result` is
// typed by the schema as an object only: its shapes are features/causal/lib/results.ts.
import type { components } from './schema';

type Schemas = components['schemas'];

export type CausalJob = Schemas['CausalJob'];
export type CausalJobDetail = Schemas['CausalJobDetail'];
export type CausalJobStatus = Schemas['CausalJob']['status'];
export type CausalKind = Schemas['CausalKindEnum'];
export type CausalJobCreate = Schemas['CausalJobCreateRequest'];
export type CausalKeyGroup = Schemas['CausalKeyGroupRequest'];
export type CausalPrefixSet = Schemas['CausalPrefixSetRequest'];
export type CausalGroupName = Schemas['GroupEnum'];
export type CausalLabelSource = Schemas['CausalKeyGroupSourceEnum'];

/** The probes, in the order the page offers them. */
export const CAUSAL_KINDS: readonly CausalKind[] = [
  'tracing',
  'attribution',
  'ablation',
  'dissociation',
];

/** Listed keys: [layer (from 1), index] pairs. */
export type KeyListGroup = { by: 'keys'; keys: [number, number][] };
/** Every key with a pattern of one of `kinds` in submitted annotations or gold. */
export type LabelGroup = { by: 'label' } & Pick<
  CausalKeyGroup,
  'kinds' | 'source' | 'annotator' | 'layers'
>;
export type KeyGroup = KeyListGroup | LabelGroup;

type Common = Pick<CausalJobCreate, 'seed'>;

/** One probe as it is posted: its kind and the fields it reads, no other. */
export type CausalProbe =
  | (Common & { kind: 'ablation'; group: KeyGroup } & Pick<
        CausalJobCreate,
        'scale' | 'random_prefixes'
      >)
  | (Common & {
      kind: 'dissociation';
      group_a: KeyGroup;
      group_b: KeyGroup;
      set_p: CausalPrefixSet;
      set_q: CausalPrefixSet;
    } & Pick<CausalJobCreate, 'scale'>)
  | (Common & { kind: 'tracing'; prompt: string; subject: string; answer: string } & Pick<
        CausalJobCreate,
        'noise' | 'samples' | 'window'
      >)
  | (Common & { kind: 'attribution'; prompts: string[]; answer: string } & Pick<
        CausalJobCreate,
        'steps' | 'threshold' | 'share' | 'layers'
      >);
