import type {
  AnnotationState,
  AnnotatorTable,
  AnnotatorTableRow,
  CompositionJob,
  CompositionStatus,
  ExportJob,
  KeyDetail,
  MiningRun,
  ReportComposition,
  ReportCompositionLayer,
  ReportEstimate,
  ReportFigure2Row,
  ReportRate,
  ReportSparsity,
  ReportValueAgreementEveryKey,
  StudyDetail,
  StudyReport,
  TriggerPrefix,
} from '../api/types';

export function makeState(overrides: Partial<AnnotationState> = {}): AnnotationState {
  return {
    id: 1,
    key_id: 10,
    status: 'draft',
    note: '',
    version: 1,
    submitted_at: null,
    updated_at: '2025-03-01T09:30:00Z',
    patterns: [],
    labels: [],
    active_seconds: 0,
    ...overrides,
  };
}

export function makePrefix(rank: number, overrides: Partial<TriggerPrefix> = {}): TriggerPrefix {
  return {
    rank,
    coefficient: 26 - rank,
    text: `prefix number ${rank} ends with tok${rank}`,
    trigger_token: ` tok${rank}`,
    next_token: ` next${rank}`,
    suffix: ' and the rest.',
    sentence: `prefix number ${rank} ends with tok${rank} and the rest.`,
    sentence_index: rank,
    position: 5,
    trigger_start: null,
    trigger_end: null,
    trigger_token_bytes: '',
    next_token_bytes: '',
    // Older data: no tokens, the text shows as it is.
    tokens: [],
    token_coefficients: [],
    ...overrides,
  };
}

export function makeKey(overrides: Partial<KeyDetail> = {}): KeyDetail {
  return {
    id: 10,
    study_id: 7,
    study_name: 'demo',
    is_causal: true,
    layer: 3,
    index: 42,
    value_top_tokens: null,
    prefixes: Array.from({ length: 25 }, (_, i) => makePrefix(i + 1)),
    annotation: makeState(),
    study: {
      id: 7,
      guideline_version: null,
      guidelines_acknowledged: false,
      suggestions_enabled: false,
      show_scores: false,
    },
    max_coefficient: 25,
    density: 0.1,
    histogram: null,
    samples: [],
    flag: null,
    assignment_id: 3,
    ...overrides,
  };
}

export function makeRun(overrides: Partial<MiningRun> = {}): MiningRun {
  return {
    id: 1,
    work_id: '5f0c6e2a9b1d4e7f8a3c2b1d0e9f8a7b',
    study_name: 'wiki-run',
    study_id: null,
    status: 'mining',
    error: '',
    model: 'builtin:minilm',
    corpus: 'builtin:wiki-vital',
    params: {},
    cancel_requested: false,
    sentences_truncated: 0,
    created_at: '2025-03-01T09:30:00Z',
    started_at: '2025-03-01T09:30:01Z',
    finished_at: null,
    duration_seconds: 64,
    final_tokens_per_second: null,
    progress: {
      sentences_done: 250,
      sentences_total: 1000,
      tokens_done: 5000,
      tokens_total: 20000,
      tokens_per_second: 1234.4,
      eta_seconds: 125,
      shards_done: 0,
      shards_total: 2,
    },
    ...overrides,
  };
}

type Row = ReportFigure2Row;

function figureRow(layer: number | null, shares: [number, number, number, number], n: number): Row {
  const [shallow, semantic, shallow_semantic, not_covered] = shares;
  return {
    layer,
    n,
    ties: 0,
    shares: { shallow, semantic, shallow_semantic, not_covered },
    counts: {
      shallow: shallow * n,
      semantic: semantic * n,
      shallow_semantic: shallow_semantic * n,
      not_covered: not_covered * n,
    },
  };
}

function estimate(
  value: number | null,
  low: number | null = null,
  high: number | null = null,
): ReportEstimate {
  return { value, low, high, n_units: 10, n_keys: 12, few_keys: false };
}

/**
 * A two-layer report (layers 1 and 2) of alice and bob. Layer 1 pooled shares are
 * 0.4 / 0.2 / 0.1 / 0.3, layer 2 0.1 / 0.5 / 0 / 0.4; overall 0.25 / 0.35 / 0.05 / 0.35.
 */
export function makeReport(overrides: Partial<StudyReport> = {}): StudyReport {
  const layers = [figureRow(1, [0.4, 0.2, 0.1, 0.3], 10), figureRow(2, [0.1, 0.5, 0, 0.4], 10)];
  const overall = figureRow(null, [0.25, 0.35, 0.05, 0.35], 20);
  const agreementRow = (layer: number | null) => ({
    layer,
    krippendorff_alpha: estimate(0.743, 0.612, 0.851),
    fleiss_kappa: estimate(0.21, 0.1, 0.3),
    cohen_kappa_mean: estimate(0.5),
    raw_agreement: estimate(0.8, 0.7, 0.9),
  });
  const block = (rows: Row[], all: Row) => ({ layers: rows, overall: all });
  return {
    study: { id: 7, name: 'demo', model: 'gpt2', corpus: 'wiki', top_k: 25 },
    filters: { annotators: null, layers: null, submitted_only: true },
    labels: ['shallow', 'semantic', 'shallow+semantic', 'not-covered'],
    definitions: { unit: 'a (key, prefix rank) cell' },
    figure2: {
      pooled: block(layers, overall),
      majority: block([figureRow(1, [0.5, 0.5, 0, 0], 5), figureRow(2, [0, 0, 0, 1], 5)], {
        ...figureRow(null, [0.25, 0.25, 0, 0.5], 10),
        ties: 2,
      }),
      // Gold: curated keys in layer 1 only (layer 2 has none: n 0, null shares).
      gold: block(
        [
          figureRow(1, [0.6, 0.2, 0, 0.2], 5),
          {
            ...figureRow(2, [0, 0, 0, 0], 0),
            shares: { shallow: null, semantic: null, shallow_semantic: null, not_covered: null },
          },
        ],
        figureRow(null, [0.6, 0.2, 0, 0.2], 5),
      ),
      per_annotator: [
        {
          annotator: 'alice',
          ...block(
            [figureRow(1, [1, 0, 0, 0], 5), figureRow(2, [0, 1, 0, 0], 5)],
            figureRow(null, [0.5, 0.5, 0, 0], 10),
          ),
        },
        {
          annotator: 'bob',
          ...block(
            [figureRow(1, [0, 0, 0, 1], 5), figureRow(2, [0, 0, 1, 0], 5)],
            figureRow(null, [0, 0, 0.5, 0.5], 10),
          ),
        },
      ],
    },
    coverage: {
      layers: [1, 2].map((layer) => ({
        layer,
        n_prefixes: 10,
        covered: 7,
        share_covered: 0.7,
        n_annotations: 2,
        n_patterns: 7,
        mean_patterns_per_key: 3.5,
      })),
      overall: {
        layer: null,
        n_prefixes: 20,
        covered: 14,
        share_covered: 0.7,
        n_annotations: 4,
        n_patterns: 14,
        mean_patterns_per_key: 3.5,
      },
      gold: {
        layers: [1, 2].map((layer) => ({
          layer,
          n_prefixes: layer === 1 ? 5 : 0,
          covered: layer === 1 ? 4 : 0,
          share_covered: layer === 1 ? 0.8 : null,
          n_annotations: layer === 1 ? 1 : 0,
          n_patterns: layer === 1 ? 2 : 0,
          mean_patterns_per_key: layer === 1 ? 2 : null,
        })),
        overall: {
          layer: null,
          n_prefixes: 5,
          covered: 4,
          share_covered: 0.8,
          n_annotations: 1,
          n_patterns: 2,
          mean_patterns_per_key: 2,
        },
      },
    },
    agreement_with_gold: [
      { annotator: 'alice', kappa: 2 / 3, raw_agreement: 0.8, n_units: 5, n_keys: 1 },
      { annotator: 'bob', kappa: 0, raw_agreement: 0, n_units: 5, n_keys: 1 },
    ],
    check_accuracy: [
      { annotator: 'alice', n_checks: 1, raw_agreement: 0.6, kappa: 0.375, n_units: 5 },
    ],
    agreement: {
      coders: ['alice', 'bob'],
      bootstrap_replicates: 1000,
      bootstrap_seed: 0,
      bootstrap_min_keys: 10,
      gold_as_coder: false,
      gold_coder: '(gold)',
      labels: {
        layers: [agreementRow(1), agreementRow(2)],
        overall: agreementRow(null),
        cohen_kappa_pairs: [{ annotators: ['alice', 'bob'], value: 0.5, n_units: 10 }],
      },
      binary: {
        layers: [agreementRow(1), agreementRow(2)],
        overall: agreementRow(null),
        cohen_kappa_pairs: [],
      },
    },
    pattern_jaccard: {
      pairs: [
        {
          annotators: ['alice', 'bob'],
          layers: [
            { layer: 1, mean: 0.6, n_keys: 1 },
            { layer: 2, mean: null, n_keys: 0 },
          ],
          overall: { layer: null, mean: 0.6, n_keys: 1 },
        },
      ],
      layers: [
        { layer: 1, mean: 0.6, n_keys: 1 },
        { layer: 2, mean: null, n_keys: 0 },
      ],
      overall: { layer: null, mean: 0.6, n_keys: 1 },
    },
    value_agreement: {
      applicable: true,
      reason: null,
      vocab_size: 50257,
      random_baseline: 1 / 50257,
      layers: [1, 2].map((layer) => ({
        layer,
        n_keys: 2,
        next_end: 0,
        next_unknown: layer === 2 ? 1 : 0,
        next_token: rate(layer === 2 ? 0 : 1, layer === 2 ? 1 : 2),
        trigger_token: rate(0, 2),
      })),
      overall: {
        layer: null,
        n_keys: 4,
        next_end: 0,
        next_unknown: 1,
        next_token: rate(1, 3),
        trigger_token: rate(0, 4),
      },
    },
    value_agreement_gold: {
      applicable: true,
      reason: null,
      vocab_size: 50257,
      random_baseline: 1 / 50257,
      layers: [1, 2].map((layer) => ({
        layer,
        n_keys: layer === 1 ? 1 : 0,
        next_end: 0,
        next_unknown: 0,
        next_token: rate(layer === 1 ? 1 : 0, layer === 1 ? 1 : 0),
        trigger_token: rate(0, layer === 1 ? 1 : 0),
      })),
      overall: {
        layer: null,
        n_keys: 1,
        next_end: 0,
        next_unknown: 0,
        next_token: rate(1, 1),
        trigger_token: rate(0, 1),
      },
    },
    value_agreement_every_key: makeEveryKey([1, 2]),
    perturbation: {
      layers: [1, 2].map((layer) => ({ layer, n_keys: 0, first: null, last: null, random: null })),
      overall: { layer: null, n_keys: 0, first: null, last: null, random: null },
    },
    pattern_scores: makePatternScores(),
    composition: makeComposition({ computed: false }),
    sparsity: makeSparsity([]),
    ...overrides,
  };
}

const PAPER = {
  active_share: 'Figure 7: 10–50% of the 4,096 memories active.',
  none_agree_share: 'Figure 8: at least about 68%.',
  residual_final_share: 'Figure 9: about a third.',
  change: 'Figure 11: most changes are compositions.',
  final_prob_mean: 'Figure 10: rises through the layers.',
  sparsity: 'The paper reports no Gini or density figures.',
  model: 'Geva et al. 2021 measured a 16-layer model.',
};

/**
 * §5's figures of the given layers. With `readings` (a model with a final norm, the
 * default) every figure that goes through the unembedding has both readings; layer L has
 * none_agree_share 0.7 + L/100 without the norm and 0.8 + L/100 with it, residual_final_share
 * 0.2·L / 0.3·L, final_prob_mean 0.1·L / 0.15·L, change 0.6/0.1/0.3 without and 0.5/0.2/0.3
 * with. Without `readings` the figures are the plain numbers of "without". `gated` adds
 * active_share_tenth. Not `computed`: what the report says before the job ran (or, with
 * `applies` false, for an encoder).
 */
export function makeComposition({
  layers = [1, 2],
  readings = true,
  gated = false,
  computed = true,
  applies = true,
}: {
  layers?: number[];
  readings?: boolean;
  gated?: boolean;
  computed?: boolean;
  applies?: boolean;
} = {}): ReportComposition {
  if (!applies || !computed) {
    return {
      applies,
      reason: applies ? 'Not computed yet.' : 'The model is an encoder.',
      paper: PAPER,
      layers: [],
    };
  }
  const pair = (without: number, withNorm: number) =>
    readings ? { without_final_norm: without, with_final_norm: withNorm } : without;
  const row = (layer: number): ReportCompositionLayer => ({
    layer,
    active_share: {
      mean: 0.4 - 0.1 * layer,
      q1: 0.3 - 0.1 * layer,
      median: 0.38 - 0.1 * layer,
      q3: 0.5 - 0.1 * layer,
    },
    ...(gated
      ? {
          active_share_tenth: {
            mean: 0.05 * layer,
            q1: 0.04 * layer,
            median: 0.05 * layer,
            q3: 0.06 * layer,
          },
        }
      : {}),
    none_agree_share: pair(0.7 + layer / 100, 0.8 + layer / 100),
    agree_stopword_share: pair(0.5, 0.6),
    residual_final_share: pair(0.2 * layer, 0.3 * layer),
    change: readings
      ? {
          without_final_norm: { residual: 0.6, ffn: 0.1, neither: 0.3 },
          with_final_norm: { residual: 0.5, ffn: 0.2, neither: 0.3 },
        }
      : { residual: 0.6, ffn: 0.1, neither: 0.3 },
    final_prob_mean: pair(0.1 * layer, 0.15 * layer),
  });
  return {
    applies: true,
    reason: null,
    paper: PAPER,
    layers: layers.map(row),
    n_prefixes: 4000,
    final_norm: readings ? [false, true] : [false],
    final_norm_path: readings ? 'model.norm' : null,
    gated,
    vocab_size: 49152,
    slice: {
      prefixes: 4000,
      held_out: 3000,
      from_mined: 1000,
      seed: 0,
      note: 'the corpus had 3000 sentences that mining did not read',
    },
    prefix_set: [],
    job: 3,
    computed_at: '2026-12-04T10:00:00Z',
  };
}

/** Sparsity of the given layers: density median 0.25 [0.1, 0.45], Gini 0.4 + L/10, a
 * share 0.12 above a tenth of the peak; no layers is a study mined before they were kept. */
export function makeSparsity(layers: number[] = [1, 2]): ReportSparsity {
  return {
    paper: PAPER.sparsity,
    ...(layers.length > 0 ? { n_positions: 25_000 } : {}),
    layers: layers.map((layer) => ({
      layer,
      density: { mean: 0.3, q1: 0.1, median: 0.25, q3: 0.45 },
      gini: 0.4 + layer / 10,
      above_tenth_of_peak: 0.12,
    })),
  };
}

/** The held-out scores of layers 1 and 2: written and shuffled patterns in layer 1, none in
 * layer 2 (folded), no accepted suggestion. */
export function makePatternScores(): StudyReport['pattern_scores'] {
  const none = { mean: null, low: null, high: null };
  const empty = { n: 0, detection: none, embedding: none };
  const scored = (n: number, detection: number, embedding: number) => ({
    n,
    detection: { mean: detection, low: detection - 0.05, high: detection + 0.05 },
    embedding: { mean: embedding, low: embedding - 0.05, high: embedding + 0.05 },
  });
  const row = { written: scored(6, 0.71, 0.82), suggestion: empty, shuffled: scored(6, 0.5, 0.49) };
  return {
    definition: 'Each pattern is tested on examples its annotator never saw.',
    layers: [
      { layer: 1, ...row },
      { layer: 2, written: empty, suggestion: empty, shuffled: empty },
    ],
    overall: row,
  };
}

/** A §4 rate with a rough interval (the numbers only need to be ordered). */
export function rate(matches: number, n: number): ReportRate {
  if (n === 0) return { matches, n, rate: null, low: null, high: null };
  const p = matches / n;
  return { matches, n, rate: p, low: Math.max(0, p - 0.1), high: Math.min(1, p + 0.1) };
}

/** §4 over every key of the given layers: 1536 keys a layer, both variants; layer L has
 * L next-token matches without the final norm, 2L with it, and 3 cut sentences. */
export function makeEveryKey(layers: number[]): ReportValueAgreementEveryKey {
  const row = (layer: number | null, scale: number, count: number) => {
    const n = 1536 * count;
    const unknown = 3 * count;
    return {
      layer,
      n_keys: n,
      next_end: 12 * count,
      next_unknown: unknown,
      next_token: {
        without_final_norm: rate(scale, n - unknown),
        with_final_norm: rate(2 * scale, n - unknown),
      },
      trigger_token: { without_final_norm: rate(0, n), with_final_norm: rate(count, n) },
    };
  };
  const total = layers.reduce((sum, layer) => sum + layer, 0);
  return {
    applicable: true,
    reason: null,
    detail: null,
    format: 'ffkv.value-agreement/v1',
    vocab_size: 49152,
    random_baseline: 1 / 49152,
    final_norm: 'model.norm',
    variants: ['without_final_norm', 'with_final_norm'],
    layers: layers.map((layer) => row(layer, layer, 1)),
    overall: row(null, total, layers.length),
  };
}

export function makeAnnotatorTable(overrides: Partial<AnnotatorTable> = {}): AnnotatorTable {
  const row = (username: string): AnnotatorTableRow => ({
    username,
    keys_done: 2,
    median_active_seconds: 60,
    patterns_per_key: 1,
    coverage: 0.5,
    alpha_with_others: 0.25,
    alpha_units: 5,
    kappa_with_gold: 2 / 3,
    raw_agreement_with_gold: 0.8,
    gold_units: 5,
    gold_keys: 1,
    checks_n: 1,
    check_accuracy: 0.6,
    check_kappa: 0.375,
    flags: 1,
    quality_flags: [],
  });
  return {
    study: { id: 7, name: 'demo' },
    study_median_active_seconds: 30,
    study_patterns_per_key: 1,
    labels: ['shallow', 'semantic', 'shallow+semantic', 'not-covered'],
    definitions: { fast: 'Median active time under a third of the study median.' },
    annotators: [
      row('alice'),
      {
        ...row('bob'),
        keys_done: 1,
        median_active_seconds: 6,
        kappa_with_gold: 0,
        raw_agreement_with_gold: 0,
        check_accuracy: null,
        checks_n: 0,
        flags: 0,
        quality_flags: ['fast', 'low_gold_agreement'],
      },
    ],
    ...overrides,
  };
}

export function makeStudy(overrides: Partial<StudyDetail> = {}): StudyDetail {
  return {
    id: 7,
    name: 'demo',
    model_name: 'gpt2',
    corpus: 'wiki',
    top_k: 25,
    seed: 0,
    n_layers: 2,
    d_ff: 3072,
    is_causal: true,
    show_value_tokens: false,
    suggestions_enabled: true,
    show_scores: false,
    archived: false,
    key_count: 4,
    check_rate: 0,
    check_keys: 0,
    created_at: '2025-03-01T09:30:00Z',
    layers: [
      { layer: 1, key_count: 2 },
      { layer: 2, key_count: 2 },
    ],
    ...overrides,
  };
}

export function makeExportJob(overrides: Partial<ExportJob> = {}): ExportJob {
  return {
    id: 5,
    study_id: 7,
    format: 'jsonl',
    status: 'queued',
    progress: 0,
    keys_done: 0,
    keys_total: 4,
    error: '',
    created_at: '2025-03-01T09:30:00Z',
    started_at: null,
    finished_at: null,
    download_url: null,
    ...overrides,
  };
}

export function makeCompositionJob(overrides: Partial<CompositionJob> = {}): CompositionJob {
  return {
    id: 3,
    study_id: 7,
    prefixes: 4000,
    seed: 0,
    status: 'queued',
    error: '',
    created_by: 'carol',
    created_at: '2026-12-04T09:30:00Z',
    started_at: null,
    finished_at: null,
    ...overrides,
  };
}

/** The composition API's answer: the latest job (none by default) and the slice sizes. */
export function makeCompositionStatus(job: CompositionJob | null = null): CompositionStatus {
  return { job, default_prefixes: 4000, max_prefixes: 50000 };
}
