import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import i18n from '../../../i18n';
import {
  makeAblationResult,
  makeCausalDetail,
  makeCausalJob,
  makeTraceResult,
} from '../../../test/causalFactories';
import { advance, until, useFakeClock } from '../../../test/clock';
import { makeCompositionStatus, makeReport, makeStudy } from '../../../test/factories';
import { carol, json, mockApi, renderApp } from '../../../test/utils';
import type { CausalJob } from '../../../api/causal';
import { CAUSAL_POLL_MS } from '../hooks/useCausalJobs';

const STUDY = 'GET /api/admin/studies/7/';
const JOBS = 'GET /api/admin/studies/7/causal/';
const START = 'POST /api/admin/studies/7/causal/';
const PAGE = '/manage/studies/7/causal';

/** The page with no job yet; every POST recorded and answered by `answer`. */
function setUp(
  answer: (body: Record<string, unknown>) => Response = (body) =>
    json(202, makeCausalJob({ kind: body.kind as CausalJob['kind'], params: body })),
) {
  const posted: Record<string, unknown>[] = [];
  const fetchMock = mockApi({
    [STUDY]: () => json(200, makeStudy({ n_layers: 4 })),
    [JOBS]: () => json(200, []),
    [START]: (init) => {
      const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
      posted.push(body);
      return answer(body);
    },
  });
  renderApp({ path: PAGE, user: carol });
  return { posted, fetchMock };
}

function form(name: string) {
  return screen.getByRole('form', { name });
}

async function openTab(name: string) {
  await userEvent.click(await screen.findByRole('tab', { name }));
  return form(name);
}

describe('the causal page: forms', () => {
  it('posts a tracing with the answer as typed, its leading space kept, and ROME’s defaults', async () => {
    const user = userEvent.setup();
    const { posted } = setUp();
    expect(await screen.findByRole('heading', { name: 'Causal probes: demo' })).toBeInTheDocument();
    const tracing = form('Causal tracing');
    expect(within(tracing).getByLabelText('Noise (× σ of the embeddings)')).toHaveValue(3);
    expect(within(tracing).getByLabelText('Noise samples')).toHaveValue(10);
    expect(within(tracing).getByLabelText('Window (layers)')).toHaveValue(10);
    expect(within(tracing).getByLabelText('Seed')).toHaveValue(0);
    await user.type(within(tracing).getByLabelText('Prompt'), 'The Eiffel Tower is in');
    await user.type(within(tracing).getByLabelText('Subject'), 'The Eiffel Tower');
    await user.type(within(tracing).getByLabelText('Answer'), ' Paris');
    await user.click(within(tracing).getByRole('button', { name: 'Run the tracing' }));
    await waitFor(() => expect(posted).toHaveLength(1));
    expect(posted[0]).toEqual({
      kind: 'tracing',
      prompt: 'The Eiffel Tower is in',
      subject: 'The Eiffel Tower',
      answer: ' Paris',
      noise: 3,
      samples: 10,
      window: 10,
      seed: 0,
    });
    // The job just run is listed and opened.
    const jobs = await screen.findByTestId('causal-jobs');
    expect(within(jobs).getByTestId('causal-job-status')).toHaveTextContent('Queued');
    expect(screen.getByTestId('causal-result-status')).toHaveTextContent(
      /^Queued since .+: the result shows here when the job is done\.$/,
    );
  });

  it('posts an attribution: its prompts one a line, its layers, its thresholds', async () => {
    const user = userEvent.setup();
    const { posted } = setUp();
    const attribution = await openTab('Knowledge attribution');
    expect(within(attribution).getByLabelText('Steps')).toHaveValue(20);
    expect(within(attribution).getByLabelText('Threshold (× the largest)')).toHaveValue(0.2);
    expect(within(attribution).getByLabelText('Share of prompts')).toHaveValue(0.7);
    await user.type(
      within(attribution).getByLabelText('Prompts (one a line)'),
      'The Eiffel Tower is in{enter}{enter}The Eiffel Tower is located in the city of',
    );
    await user.type(within(attribution).getByLabelText('Answer'), ' Paris');
    await user.type(within(attribution).getByLabelText('Only in layers'), '2-3');
    await user.click(within(attribution).getByRole('button', { name: 'Run the attribution' }));
    await waitFor(() => expect(posted).toHaveLength(1));
    expect(posted[0]).toEqual({
      kind: 'attribution',
      prompts: ['The Eiffel Tower is in', 'The Eiffel Tower is located in the city of'],
      answer: ' Paris',
      steps: 20,
      threshold: 0.2,
      share: 0.7,
      layers: [2, 3],
      seed: 0,
    });
  });

  it('posts an ablation of the keys one annotator labelled semantic in some layers', async () => {
    const user = userEvent.setup();
    const { posted } = setUp();
    const ablation = await openTab('Key ablation');
    const group = within(ablation).getByRole('group', { name: 'Keys to ablate' });
    await user.click(within(group).getByRole('radio', { name: "Their patterns' kind" }));
    expect(within(group).getByRole('checkbox', { name: 'semantic' })).toBeChecked();
    expect(within(group).getByLabelText('Patterns from')).toHaveValue('annotations');
    await user.type(within(group).getByLabelText('Annotator'), 'alice');
    await user.type(within(group).getByLabelText('Only in layers'), '3');
    const scale = within(ablation).getByLabelText('Scale');
    expect(scale).toHaveValue(0);
    fireEvent.change(scale, { target: { value: '2' } });
    expect(within(ablation).getByLabelText('Random prefixes')).toHaveValue(500);
    await user.click(within(ablation).getByRole('button', { name: 'Run the ablation' }));
    await waitFor(() => expect(posted).toHaveLength(1));
    expect(posted[0]).toEqual({
      kind: 'ablation',
      group: {
        by: 'label',
        kinds: ['semantic'],
        source: 'annotations',
        annotator: 'alice',
        layers: [3],
      },
      scale: 2,
      random_prefixes: 500,
      seed: 0,
    });
  });

  it('posts a dissociation: listed keys, a gold label group, an own and a text prefix set', async () => {
    const user = userEvent.setup();
    const { posted } = setUp();
    const dissociation = await openTab('Double dissociation');
    const a = within(dissociation).getByRole('group', { name: 'Group A' });
    await user.type(within(a).getByLabelText('Keys (layer:index)'), '1:12, 3:400');
    const b = within(dissociation).getByRole('group', { name: 'Group B' });
    await user.click(within(b).getByRole('radio', { name: "Their patterns' kind" }));
    // Group B starts on shallow patterns; gold has no annotator to choose.
    expect(within(b).getByRole('checkbox', { name: 'shallow' })).toBeChecked();
    await user.selectOptions(within(b).getByLabelText('Patterns from'), 'gold');
    expect(within(b).queryByLabelText('Annotator')).not.toBeInTheDocument();
    const p = within(dissociation).getByRole('group', { name: 'Prefix set P' });
    expect(within(p).getByRole('radio', { name: "Group A's own trigger prefixes" })).toBeChecked();
    const q = within(dissociation).getByRole('group', { name: 'Prefix set Q' });
    await user.click(within(q).getByRole('radio', { name: 'Sentences of my own' }));
    await user.type(
      within(q).getByLabelText('Sentences (one a line)'),
      'Paris is a city.{enter}Rome is old.',
    );
    await user.click(within(dissociation).getByRole('button', { name: 'Run the dissociation' }));
    await waitFor(() => expect(posted).toHaveLength(1));
    expect(posted[0]).toEqual({
      kind: 'dissociation',
      group_a: {
        by: 'keys',
        keys: [
          [1, 12],
          [3, 400],
        ],
      },
      group_b: { by: 'label', kinds: ['shallow'], source: 'gold' },
      set_p: { by: 'own', group: 'a' },
      set_q: { by: 'text', text: 'Paris is a city.\nRome is old.' },
      scale: 0,
      seed: 0,
    });
  });

  it('names a bad key and sends nothing', async () => {
    const user = userEvent.setup();
    const { fetchMock } = setUp();
    const ablation = await openTab('Key ablation');
    const keys = within(ablation).getByLabelText('Keys (layer:index)');
    await user.type(keys, '1:12, 3-400');
    await user.click(within(ablation).getByRole('button', { name: 'Run the ablation' }));
    expect(within(ablation).getByRole('alert')).toHaveTextContent(
      'Keys: “3-400” is not a key. Write layer:index with layers from 1, e.g. 3:400.',
    );
    expect(keys).toHaveAttribute('aria-invalid', 'true');
    expect(keys).toHaveFocus();
    expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'POST')).toBe(false);
  });

  it("shows the server's refusal beside the form and keeps what was typed", async () => {
    const user = userEvent.setup();
    const detail =
      "the key group is empty: no key carries a semantic pattern in alice's submitted annotations in layers 3";
    setUp(() => json(400, { detail, code: 'causal_refused' }));
    const ablation = await openTab('Key ablation');
    await user.click(within(ablation).getByRole('radio', { name: "Their patterns' kind" }));
    await user.type(within(ablation).getByLabelText('Annotator'), 'alice');
    await user.type(within(ablation).getByLabelText('Only in layers'), '3');
    await user.click(within(ablation).getByRole('button', { name: 'Run the ablation' }));
    const alert = await within(ablation).findByRole('alert');
    expect(alert).toHaveTextContent(`The causal probe was refused: ${detail}`);
    expect(within(ablation).getByLabelText('Annotator')).toHaveValue('alice');
    expect(within(ablation).getByLabelText('Only in layers')).toHaveValue('3');
    expect(within(ablation).getByRole('button', { name: 'Run the ablation' })).toBeEnabled();
    expect(screen.getByTestId('causal-jobs')).toHaveTextContent('No probe has run');
  });

  it('moves between the probes with the arrow keys, keeping what each form holds', async () => {
    const user = userEvent.setup();
    setUp();
    const tracing = await screen.findByRole('tab', { name: 'Causal tracing' });
    expect(tracing).toHaveAttribute('aria-selected', 'true');
    await user.type(within(form('Causal tracing')).getByLabelText('Prompt'), 'Rome is in');
    tracing.focus();
    await user.keyboard('{ArrowRight}');
    const attribution = screen.getByRole('tab', { name: 'Knowledge attribution' });
    expect(attribution).toHaveFocus();
    expect(attribution).toHaveAttribute('aria-selected', 'true');
    expect(form('Knowledge attribution')).toBeVisible();
    expect(screen.queryByRole('form', { name: 'Causal tracing' })).not.toBeInTheDocument();
    await user.keyboard('{End}');
    expect(screen.getByRole('tab', { name: 'Double dissociation' })).toHaveFocus();
    await user.keyboard('{ArrowRight}');
    expect(tracing).toHaveFocus();
    expect(within(form('Causal tracing')).getByLabelText('Prompt')).toHaveValue('Rome is in');
  });
});

describe('the causal page: jobs', () => {
  it('polls a new job until it is done and opens its result', async () => {
    useFakeClock();
    const job = makeCausalJob({ id: 12 });
    let started = false;
    let polls = 0;
    let details = 0;
    mockApi({
      [STUDY]: () => json(200, makeStudy({ n_layers: 4 })),
      [JOBS]: () => {
        if (!started) return json(200, []);
        polls += 1;
        if (polls === 1) {
          return json(200, [{ ...job, status: 'running', started_at: '2026-12-04T09:31:00Z' }]);
        }
        return json(200, [{ ...job, status: 'done', finished_at: '2026-12-04T09:33:00Z' }]);
      },
      [START]: () => {
        started = true;
        return json(202, job);
      },
      'GET /api/admin/causal/12/': () => {
        details += 1;
        return json(200, makeCausalDetail({ ...job, status: 'done' }, makeTraceResult()));
      },
    });
    renderApp({ path: PAGE, user: carol });
    await until(() => expect(screen.getByTestId('causal-jobs')).toHaveTextContent('No probe'));
    const tracing = form('Causal tracing');
    fireEvent.change(within(tracing).getByLabelText('Prompt'), {
      target: { value: 'The Eiffel Tower is in' },
    });
    fireEvent.change(within(tracing).getByLabelText('Subject'), {
      target: { value: 'The Eiffel Tower' },
    });
    fireEvent.change(within(tracing).getByLabelText('Answer'), { target: { value: ' Paris' } });
    fireEvent.click(within(tracing).getByRole('button', { name: 'Run the tracing' }));
    await until(() =>
      expect(screen.getByTestId('causal-result')).toHaveAttribute('data-status', 'queued'),
    );

    await advance(CAUSAL_POLL_MS - 1);
    expect(polls).toBe(0); // not before two seconds
    await advance(1);
    await until(() => expect(screen.getByTestId('causal-job-status')).toHaveTextContent('Running'));
    expect(screen.getByTestId('causal-result-status')).toHaveTextContent(/^Running since /);
    expect(details).toBe(0);

    await advance(CAUSAL_POLL_MS);
    await until(() => expect(screen.getByTestId('trace-result')).toBeInTheDocument());
    expect(screen.getByTestId('causal-job-status')).toHaveTextContent('Done');
    expect(screen.getByTestId('trace-p-clean')).toHaveTextContent('96.1%');
    expect(
      within(screen.getByTestId('trace-keys')).getByRole('link', { name: 'L2 · key 400' }),
    ).toHaveAttribute('href', '/manage/review/keys/901');
    await advance(10 * CAUSAL_POLL_MS);
    expect(polls).toBe(2); // done: no more polling
    expect(details).toBe(1); // a done job's result is fetched once
  });

  it('lists each job with its status, a failed one with its reason, and opens one', async () => {
    const user = userEvent.setup();
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [JOBS]: () =>
        json(200, [
          makeCausalJob({
            id: 9,
            kind: 'tracing',
            status: 'failed',
            error: 'the answer " Paris and" is 2 tokens: give one',
            finished_at: '2026-12-04T09:35:00Z',
          }),
          makeCausalJob({
            id: 5,
            kind: 'ablation',
            params: {
              group: {
                by: 'keys',
                keys: [[3, 12]],
                resolved: [
                  [3, 12],
                  [3, 400],
                ],
              },
            },
            status: 'done',
            finished_at: '2026-12-04T09:40:00Z',
          }),
        ]),
      'GET /api/admin/causal/5/': () =>
        json(
          200,
          makeCausalDetail(
            makeCausalJob({ id: 5, kind: 'ablation', status: 'done' }),
            makeAblationResult(),
          ),
        ),
    });
    renderApp({ path: PAGE, user: carol });
    const jobs = await screen.findByTestId('causal-jobs');
    const failed = jobs.querySelector('tr[data-job="9"]') as HTMLElement;
    expect(within(failed).getByTestId('causal-job-status')).toHaveTextContent('Failed');
    expect(within(failed).getByTestId('causal-job-error')).toHaveTextContent(
      'the answer " Paris and" is 2 tokens: give one',
    );
    expect(failed).toHaveTextContent('The Eiffel Tower is in → “ Paris”');
    const done = jobs.querySelector('tr[data-job="5"]') as HTMLElement;
    expect(done).toHaveTextContent('Key ablation');
    expect(done).toHaveTextContent('2 keys');
    expect(screen.getByTestId('causal-result-none')).toBeInTheDocument();
    await user.click(within(done).getByRole('button', { name: 'Show job 5 (Key ablation)' }));
    expect(await screen.findByTestId('ablation-result')).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Job 5: Key ablation' })).toBeInTheDocument();
    await user.click(within(failed).getByRole('button', { name: 'Show job 9 (Causal tracing)' }));
    expect(screen.getByTestId('causal-result-error')).toHaveTextContent('is 2 tokens');
  });

  it('offers no form for an encoder', async () => {
    mockApi({
      [STUDY]: () => json(200, makeStudy({ is_causal: false })),
      [JOBS]: () => json(200, []),
    });
    renderApp({ path: PAGE, user: carol });
    expect(await screen.findByTestId('causal-encoder')).toHaveTextContent('encoder');
    expect(screen.queryByRole('tablist')).not.toBeInTheDocument();
  });

  it('is written in Chinese for a Chinese reader', async () => {
    await act(() => i18n.changeLanguage('zh-CN'));
    setUp();
    expect(await screen.findByRole('heading', { name: '因果探针：demo' })).toBeInTheDocument();
    expect(screen.getByRole('form', { name: '因果追踪' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: '运行追踪' })).toBeInTheDocument();
  });
});

describe('links to the causal page', () => {
  it('from the study page', async () => {
    const user = userEvent.setup();
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      'GET /api/admin/studies/7/batches/': () => json(200, []),
      'GET /api/admin/studies/7/guidelines/': () => json(200, []),
      [JOBS]: () => json(200, []),
    });
    renderApp({ path: '/manage/studies/7', user: carol });
    const link = await screen.findByRole('link', { name: 'Causal probes' });
    expect(link).toHaveAttribute('href', PAGE);
    await user.click(link);
    expect(await screen.findByRole('heading', { name: 'Causal probes: demo' })).toBeInTheDocument();
  });

  it("from the report page's header", async () => {
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      'GET /api/admin/studies/7/report/': () => json(200, makeReport()),
      'GET /api/admin/studies/7/composition/': () => json(200, makeCompositionStatus()),
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });
    expect(await screen.findByRole('link', { name: 'Causal probes' })).toHaveAttribute(
      'href',
      PAGE,
    );
  });
});
