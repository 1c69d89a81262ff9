import type { AnnotationState, KeyDetail, MiningRun, TriggerPrefix } from '../api/types';

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
    ...overrides,
  };
}

export function makeRun(overrides: Partial<MiningRun> = {}): MiningRun {
  return {
    id: 1,
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
