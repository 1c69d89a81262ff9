// The probe forms' state, as typed, and the probe it posts (api/causal.ts, CausalProbe), or
// the first problem with what was typed: checked here so that a bad entry is named before
// anything is sent. Bounds are the API's (mining/apis.py, CausalCreateSerializer).
import type {
  CausalGroupName,
  CausalLabelSource,
  CausalPrefixSet,
  CausalProbe,
  KeyGroup,
} from '../../../api/causal';
import type { PatternKind } from '../../../api/types';
import { parseKeyList, parseLayers, parseLines, parseNumber } from './parse';
import type { NumberRule } from './parse';

/**
 * What went wrong, as an i18n key under `causal.problems` and its values; `field` is the
 * box's id (to focus it and mark it invalid), `name` how the message names it (an i18n key
 * under `causal.fields`).
 */
export interface Problem {
  key: ProblemKey;
  values?: Record<string, string | number>;
  field: string;
  name: FieldName;
}

export type FieldName =
  | 'prompt'
  | 'subject'
  | 'answer'
  | 'noise'
  | 'samples'
  | 'window'
  | 'seed'
  | 'prompts'
  | 'steps'
  | 'threshold'
  | 'share'
  | 'layers'
  | 'scale'
  | 'random'
  | 'group'
  | 'groupA'
  | 'groupB'
  | 'setP'
  | 'setQ';

export type ProblemKey =
  | 'required'
  | 'number'
  | 'wholeNumber'
  | 'noKeys'
  | 'badKey'
  | 'badLayer'
  | 'noKinds'
  | 'noPrompts'
  | 'tooManyPrompts'
  | 'subjectNotInPrompt'
  | 'noSentences';

export type Built = { ok: true; probe: CausalProbe } | { ok: false; problem: Problem };

class Invalid extends Error {
  constructor(readonly problem: Problem) {
    super(problem.key);
  }
}

function fail(problem: Problem): never {
  throw new Invalid(problem);
}

function build(make: () => CausalProbe): Built {
  try {
    return { ok: true, probe: make() };
  } catch (error) {
    if (error instanceof Invalid) return { ok: false, problem: error.problem };
    throw error;
  }
}

export const RULES = {
  seed: { min: 0, max: 2 ** 31 - 1, integer: true },
  scale: { min: -10, max: 10 },
  randomPrefixes: { min: 1, max: 5000, integer: true },
  noise: { min: 0, max: 100 },
  samples: { min: 1, max: 100, integer: true },
  window: { min: 1, max: 1000, integer: true },
  steps: { min: 1, max: 200, integer: true },
  threshold: { min: 0, max: 1 },
  share: { min: 0, max: 1 },
} satisfies Record<string, NumberRule>;

export const MAX_PROMPTS = 20;

function number(text: string, rule: NumberRule, field: string, name: FieldName): number {
  const value = parseNumber(text, rule);
  if (value === null) {
    fail({
      key: rule.integer ? 'wholeNumber' : 'number',
      values: { min: rule.min, max: rule.max },
      field,
      name,
    });
  }
  return value;
}

function required(text: string, field: string, name: FieldName): string {
  if (text.trim() === '') fail({ key: 'required', field, name });
  return text.trim();
}

// Key groups ------------------------------------------------------------------------

export interface KeyGroupState {
  by: 'keys' | 'label';
  /** "1:12, 3:400" */
  keys: string;
  kinds: PatternKind[];
  source: CausalLabelSource;
  /** Blank: every annotator. */
  annotator: string;
  /** Blank: every layer. */
  layers: string;
}

export const EMPTY_GROUP: KeyGroupState = {
  by: 'keys',
  keys: '',
  kinds: ['semantic'],
  source: 'annotations',
  annotator: '',
  layers: '',
};

/** `field` prefixes the boxes' ids: `${field}-keys`, `${field}-kinds`, `${field}-layers`. */
export function keyGroup(state: KeyGroupState, field: string, name: FieldName): KeyGroup {
  if (state.by === 'keys') {
    const parsed = parseKeyList(state.keys);
    if (!parsed.ok) {
      fail({ key: 'badKey', values: { entry: parsed.entry }, field: `${field}-keys`, name });
    }
    if (parsed.value.length === 0) fail({ key: 'noKeys', field: `${field}-keys`, name });
    return { by: 'keys', keys: parsed.value };
  }
  if (state.kinds.length === 0) fail({ key: 'noKinds', field: `${field}-kinds`, name });
  const layers = parseLayers(state.layers);
  if (!layers.ok) {
    fail({ key: 'badLayer', values: { entry: layers.entry }, field: `${field}-layers`, name });
  }
  const group: KeyGroup = { by: 'label', kinds: state.kinds, source: state.source };
  const annotator = state.annotator.trim();
  // An annotator names whose annotations; gold is no one's.
  if (state.source === 'annotations' && annotator) group.annotator = annotator;
  if (layers.value.length > 0) group.layers = layers.value;
  return group;
}

// Prefix sets -----------------------------------------------------------------------

export interface PrefixSetState {
  /** A group's own trigger prefixes, or sentences typed in. */
  by: CausalGroupName | 'text';
  text: string;
}

export function prefixSet(state: PrefixSetState, field: string, name: FieldName): CausalPrefixSet {
  if (state.by !== 'text') return { by: 'own', group: state.by };
  if (parseLines(state.text).length === 0) {
    fail({ key: 'noSentences', field: `${field}-text`, name });
  }
  // The text as typed: the server reads it line by line.
  return { by: 'text', text: state.text };
}

// The four probes ---------------------------------------------------------------------

export interface TracingState {
  prompt: string;
  subject: string;
  /** As typed, never trimmed: " Paris" (with its space) is the token after "is in". */
  answer: string;
  noise: string;
  samples: string;
  window: string;
  seed: string;
}

export const TRACING_DEFAULTS: TracingState = {
  prompt: '',
  subject: '',
  answer: '',
  noise: '3',
  samples: '10',
  window: '10',
  seed: '0',
};

export function tracingProbe(state: TracingState): Built {
  return build(() => {
    const prompt = required(state.prompt, 'tracing-prompt', 'prompt');
    const subject = required(state.subject, 'tracing-subject', 'subject');
    if (!prompt.includes(subject)) {
      fail({ key: 'subjectNotInPrompt', field: 'tracing-subject', name: 'subject' });
    }
    if (state.answer === '') fail({ key: 'required', field: 'tracing-answer', name: 'answer' });
    return {
      kind: 'tracing',
      prompt,
      subject,
      answer: state.answer,
      noise: number(state.noise, RULES.noise, 'tracing-noise', 'noise'),
      samples: number(state.samples, RULES.samples, 'tracing-samples', 'samples'),
      window: number(state.window, RULES.window, 'tracing-window', 'window'),
      seed: number(state.seed, RULES.seed, 'tracing-seed', 'seed'),
    };
  });
}

export interface AttributionState {
  /** One phrasing of the fact a line. */
  prompts: string;
  answer: string;
  steps: string;
  threshold: string;
  share: string;
  /** Blank: every layer. */
  layers: string;
  seed: string;
}

export const ATTRIBUTION_DEFAULTS: AttributionState = {
  prompts: '',
  answer: '',
  steps: '20',
  threshold: '0.2',
  share: '0.7',
  layers: '',
  seed: '0',
};

export function attributionProbe(state: AttributionState): Built {
  return build(() => {
    const prompts = parseLines(state.prompts);
    if (prompts.length === 0) {
      fail({ key: 'noPrompts', field: 'attribution-prompts', name: 'prompts' });
    }
    if (prompts.length > MAX_PROMPTS) {
      fail({
        key: 'tooManyPrompts',
        values: { max: MAX_PROMPTS },
        field: 'attribution-prompts',
        name: 'prompts',
      });
    }
    if (state.answer === '') {
      fail({ key: 'required', field: 'attribution-answer', name: 'answer' });
    }
    const steps = number(state.steps, RULES.steps, 'attribution-steps', 'steps');
    const threshold = number(
      state.threshold,
      RULES.threshold,
      'attribution-threshold',
      'threshold',
    );
    const share = number(state.share, RULES.share, 'attribution-share', 'share');
    const layers = parseLayers(state.layers);
    if (!layers.ok) {
      fail({
        key: 'badLayer',
        values: { entry: layers.entry },
        field: 'attribution-layers',
        name: 'layers',
      });
    }
    const probe: CausalProbe = {
      kind: 'attribution',
      prompts,
      answer: state.answer,
      steps,
      threshold,
      share,
      seed: number(state.seed, RULES.seed, 'attribution-seed', 'seed'),
    };
    if (layers.value.length > 0) probe.layers = layers.value;
    return probe;
  });
}

export interface AblationState {
  group: KeyGroupState;
  scale: string;
  randomPrefixes: string;
  seed: string;
}

export const ABLATION_DEFAULTS: AblationState = {
  group: EMPTY_GROUP,
  scale: '0',
  randomPrefixes: '500',
  seed: '0',
};

export function ablationProbe(state: AblationState): Built {
  return build(() => ({
    kind: 'ablation',
    group: keyGroup(state.group, 'ablation-group', 'group'),
    scale: number(state.scale, RULES.scale, 'ablation-scale', 'scale'),
    random_prefixes: number(
      state.randomPrefixes,
      RULES.randomPrefixes,
      'ablation-random',
      'random',
    ),
    seed: number(state.seed, RULES.seed, 'ablation-seed', 'seed'),
  }));
}

export interface DissociationState {
  groupA: KeyGroupState;
  groupB: KeyGroupState;
  setP: PrefixSetState;
  setQ: PrefixSetState;
  scale: string;
  seed: string;
}

export const DISSOCIATION_DEFAULTS: DissociationState = {
  groupA: EMPTY_GROUP,
  groupB: { ...EMPTY_GROUP, kinds: ['shallow'] },
  setP: { by: 'a', text: '' },
  setQ: { by: 'b', text: '' },
  scale: '0',
  seed: '0',
};

export function dissociationProbe(state: DissociationState): Built {
  return build(() => ({
    kind: 'dissociation',
    group_a: keyGroup(state.groupA, 'dissociation-a', 'groupA'),
    group_b: keyGroup(state.groupB, 'dissociation-b', 'groupB'),
    set_p: prefixSet(state.setP, 'dissociation-p', 'setP'),
    set_q: prefixSet(state.setQ, 'dissociation-q', 'setQ'),
    scale: number(state.scale, RULES.scale, 'dissociation-scale', 'scale'),
    seed: number(state.seed, RULES.seed, 'dissociation-seed', 'seed'),
  }));
}
