// Causal jobs and their results, shaped as mining/core/causal.py's docstrings give them.
import type { CausalJob, CausalJobDetail } from '../api/causal';
import type {
  AblationResult,
  AttributionResult,
  DissociationResult,
  TraceResult,
} from '../features/causal/lib/results';

export function makeCausalJob(overrides: Partial<CausalJob> = {}): CausalJob {
  return {
    id: 12,
    study_id: 7,
    kind: 'tracing',
    params: {
      prompt: 'The Eiffel Tower is in',
      subject: 'The Eiffel Tower',
      answer: ' Paris',
      seed: 0,
    },
    status: 'queued',
    error: '',
    created_by: 'carol',
    created_at: '2026-12-04T09:30:00Z',
    started_at: null,
    finished_at: null,
    ...overrides,
  };
}

export function makeCausalDetail(job: CausalJob, result: object): CausalJobDetail {
  return { ...job, result: result as Record<string, unknown> };
}

const LAYERS = 4;
const TOKENS = ['The', ' E', 'iff', 'el', ' Tower', ' is', ' in'];

/** A [layers][tokens] grid of small effects with one peak. */
function grid(peak: { layer: number; token: number; effect: number }): number[][] {
  return Array.from({ length: LAYERS }, (_, j) =>
    TOKENS.map((_, i) =>
      j + 1 === peak.layer && i === peak.token ? peak.effect : i < 5 ? 0.001 * (i + j) : 0,
    ),
  );
}

/**
 * "The Eiffel Tower is in" → " Paris" on a 4-layer model: the subject is tokens 0–4; the
 * hidden state peaks at layer 3 on " Tower" (8.7%), the MLP at layer 2 on " Tower"
 * (6.6%), attention at layer 4 on " in" (1.6%); of the two strongest keys at the MLP peak
 * only L2 · key 400 was mined in the study (key id 901).
 */
export function makeTraceResult(overrides: Partial<TraceResult> = {}): TraceResult {
  const peaks = {
    hidden: { layer: 3, token: 4, effect: 0.087 },
    mlp: { layer: 2, token: 4, effect: 0.066 },
    attn: { layer: 4, token: 6, effect: 0.016 },
  };
  return {
    format: 'ffkv.causal.trace/v1',
    model: 'gpt2',
    prompt: 'The Eiffel Tower is in',
    subject: 'The Eiffel Tower',
    answer: ' Paris',
    answer_id: 6342,
    answer_token: ' Paris',
    tokens: TOKENS,
    subject_span: [0, 5],
    last_subject: 4,
    noise: 3,
    noise_std: 0.0412,
    samples: 10,
    window: 10,
    seed: 0,
    p_clean: 0.961,
    p_corrupted: 0.023,
    effects: { hidden: grid(peaks.hidden), mlp: grid(peaks.mlp), attn: grid(peaks.attn) },
    peaks,
    keys: {
      layer: 2,
      token: 4,
      effect: 0.066,
      top: [
        { layer: 2, index: 400, score: 0.125, m: 1.5 },
        { layer: 2, index: 17, score: 0.0512, m: 0.81 },
      ],
    },
    key_ids: { '2:400': 901 },
    ...overrides,
  };
}

/**
 * Two phrasings of one fact; keys L3 · 12 (mined, id 501) and L4 · 400 selected. Suppressing
 * them lowers p(answer) by 29% (random keys: 1.5%); amplifying raises it by 41% (1.2%).
 */
export function makeAttributionResult(
  overrides: Partial<AttributionResult> = {},
): AttributionResult {
  const prompt = (text: string, p: number) => ({
    prompt: text,
    answer_id: 6342,
    answer_token: ' Paris',
    p,
    max_attribution: 0.31,
    top: [
      { layer: 3, index: 12, attribution: 0.31 },
      { layer: 4, index: 400, attribution: 0.12 },
    ],
    kept: [
      [3, 12],
      [4, 400],
    ] as [number, number][],
    completeness: [{ layer: 3, sum: 0.4, f_full: 0.5, f_baseline: 0.1 }],
  });
  return {
    format: 'ffkv.causal.attribution/v1',
    model: 'gpt2',
    answer: ' Paris',
    steps: 20,
    threshold: 0.2,
    share: 0.7,
    seed: 0,
    layers: [1, 2, 3, 4],
    prompts: [
      prompt('The Eiffel Tower is in', 0.42),
      prompt('The Eiffel Tower is located in the city of', 0.37),
    ],
    selected: [
      [3, 12],
      [4, 400],
    ],
    control_keys: [
      [3, 77],
      [4, 5],
    ],
    effects: {
      suppress: {
        selected: -0.29,
        control: -0.015,
        per_prompt: { selected: [-0.3, -0.28], control: [-0.01, -0.02] },
      },
      amplify: {
        selected: 0.41,
        control: 0.012,
        per_prompt: { selected: [0.45, 0.37], control: [0.01, 0.014] },
      },
    },
    key_ids: { '3:12': 501 },
    ...overrides,
  };
}

const iv = (mean: number, low: number, high: number) => ({ mean, low, high });

/**
 * Keys L3 · 12 (mined, id 501) and L3 · 400 zeroed: on their own prefixes log p falls by
 * 0.42 [0.53, 0.31] against 0.01 for random keys; on random prefixes (untagged: no layer or
 * key rows) by 0.02.
 */
export function makeAblationResult(overrides: Partial<AblationResult> = {}): AblationResult {
  const keyRow = (index: number, n: number, mean: number) => ({
    key: [3, index] as [number, number],
    n,
    ablated: iv(mean, mean - 0.1, mean + 0.1),
    control: iv(-0.01, -0.03, 0.01),
    value_top: {
      token: 262,
      text: ' the',
      ablated: iv(-0.8, -1.0, -0.6),
      control: iv(0.0, -0.02, 0.02),
    },
  });
  const empty = { ablated: null, control: null };
  return {
    format: 'ffkv.causal.ablation/v1',
    model: 'gpt2',
    scale: 0,
    seed: 0,
    replicates: 1000,
    keys: [
      [3, 12],
      [3, 400],
    ],
    control_keys: [
      [3, 5],
      [3, 9],
    ],
    sets: {
      random: {
        n: 500,
        overall: { n: 500, ablated: iv(-0.02, -0.04, 0.0), control: iv(-0.003, -0.01, 0.004) },
        layers: [{ layer: 3, n: 0, ...empty }],
        keys: [
          {
            key: [3, 12],
            n: 0,
            ...empty,
            value_top: { token: 262, text: ' the', ...empty },
          },
          {
            key: [3, 400],
            n: 0,
            ...empty,
            value_top: { token: 262, text: ' the', ...empty },
          },
        ],
      },
      own: {
        n: 40,
        overall: { n: 40, ablated: iv(-0.42, -0.53, -0.31), control: iv(-0.01, -0.03, 0.01) },
        layers: [
          { layer: 3, n: 40, ablated: iv(-0.42, -0.53, -0.31), control: iv(-0.01, -0.03, 0.01) },
        ],
        keys: [keyRow(12, 25, -0.5), keyRow(400, 15, -0.3)],
      },
    },
    key_ids: { '3:12': 501 },
    ...overrides,
  };
}

/** Group A hurts P (0.8) more than Q (0.1), B hurts Q (0.5) more than P: interaction +1.15. */
export function makeDissociationResult(
  overrides: Partial<DissociationResult> = {},
): DissociationResult {
  return {
    format: 'ffkv.causal.dissociation/v1',
    model: 'gpt2',
    scale: 0,
    seed: 0,
    replicates: 1000,
    groups: {
      a: [
        [3, 12],
        [3, 400],
      ],
      b: [[4, 7]],
    },
    n: { p: 120, q: 130 },
    table: {
      a: { p: iv(0.8, 0.6, 1.0), q: iv(0.1, 0.0, 0.2) },
      b: { p: iv(0.05, -0.02, 0.12), q: iv(0.5, 0.35, 0.66) },
    },
    interaction: { ...iv(1.15, 0.9, 1.4), sign: 1, excludes_zero: true },
    a_p_minus_a_q: iv(0.7, 0.5, 0.9),
    b_q_minus_b_p: iv(0.45, 0.3, 0.6),
    double_dissociation: true,
    key_ids: { '3:12': 501, '4:7': 502 },
    ...overrides,
  };
}
