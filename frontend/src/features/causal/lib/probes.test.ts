import { describe, expect, it } from 'vitest';

import {
  ATTRIBUTION_DEFAULTS,
  DISSOCIATION_DEFAULTS,
  TRACING_DEFAULTS,
  attributionProbe,
  dissociationProbe,
  tracingProbe,
} from './probes';

describe('the tracing probe', () => {
  it('keeps the answer as typed, leading space and all', () => {
    const built = tracingProbe({
      ...TRACING_DEFAULTS,
      prompt: ' The Eiffel Tower is in ',
      subject: 'Eiffel Tower',
      answer: ' Paris',
    });
    expect(built).toEqual({
      ok: true,
      probe: {
        kind: 'tracing',
        prompt: 'The Eiffel Tower is in',
        subject: 'Eiffel Tower',
        answer: ' Paris',
        noise: 3,
        samples: 10,
        window: 10,
        seed: 0,
      },
    });
  });

  it('wants a subject written as the prompt writes it, and whole numbers of samples', () => {
    const base = { ...TRACING_DEFAULTS, prompt: 'Rome is in', answer: ' Italy' };
    expect(tracingProbe({ ...base, subject: 'Paris' })).toMatchObject({
      ok: false,
      problem: { key: 'subjectNotInPrompt', field: 'tracing-subject' },
    });
    expect(tracingProbe({ ...base, subject: 'Rome', samples: '2.5' })).toMatchObject({
      ok: false,
      problem: { key: 'wholeNumber', field: 'tracing-samples', values: { min: 1, max: 100 } },
    });
  });
});

describe('the attribution probe', () => {
  it('leaves the layers out when none are given, and refuses more than 20 prompts', () => {
    const built = attributionProbe({ ...ATTRIBUTION_DEFAULTS, prompts: 'a\nb', answer: ' x' });
    expect(built.ok && built.probe).not.toHaveProperty('layers');
    const many = Array.from({ length: 21 }, (_, i) => `prompt ${i}`).join('\n');
    expect(
      attributionProbe({ ...ATTRIBUTION_DEFAULTS, prompts: many, answer: ' x' }),
    ).toMatchObject({
      ok: false,
      problem: { key: 'tooManyPrompts', name: 'prompts' },
    });
  });
});

describe('the dissociation probe', () => {
  it("names the group whose list is empty, and a text set's missing sentences", () => {
    expect(dissociationProbe(DISSOCIATION_DEFAULTS)).toMatchObject({
      ok: false,
      problem: { key: 'noKeys', field: 'dissociation-a-keys', name: 'groupA' },
    });
    const groups = {
      ...DISSOCIATION_DEFAULTS,
      groupA: { ...DISSOCIATION_DEFAULTS.groupA, keys: '1:2' },
      groupB: { ...DISSOCIATION_DEFAULTS.groupB, by: 'label' as const, kinds: [] },
    };
    expect(dissociationProbe(groups)).toMatchObject({
      ok: false,
      problem: { key: 'noKinds', field: 'dissociation-b-kinds', name: 'groupB' },
    });
    const sets = {
      ...groups,
      groupB: { ...groups.groupB, kinds: ['shallow' as const] },
      setQ: { by: 'text' as const, text: '\n  \n' },
    };
    expect(dissociationProbe(sets)).toMatchObject({
      ok: false,
      problem: { key: 'noSentences', field: 'dissociation-q-text', name: 'setQ' },
    });
  });
});
