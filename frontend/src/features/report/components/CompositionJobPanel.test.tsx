import { fireEvent, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import { advance, until, useFakeClock } from '../../../test/clock';
import {
  makeComposition,
  makeCompositionJob,
  makeCompositionStatus,
  makeReport,
  makeStudy,
} from '../../../test/factories';
import { carol, json, mockApi, renderApp } from '../../../test/utils';
import { COMPOSITION_POLL_MS } from '../hooks/useCompositionJob';
import { parsePrefixes } from './CompositionJobPanel';

const STUDY = 'GET /api/admin/studies/7/';
const REPORT = 'GET /api/admin/studies/7/report/';
const STATUS = 'GET /api/admin/studies/7/composition/';
const START = 'POST /api/admin/studies/7/composition/';
const PAGE = '/manage/studies/7/report';

function form() {
  return screen.getByRole('form', { name: 'Composition analysis' });
}

function runButton() {
  return within(form()).getByRole('button', { name: 'Run the analysis' });
}

describe('the composition job', () => {
  it('posts the slice size, follows the job, and shows the figures when it is done', async () => {
    // A fake clock: the job is polled on the page's time, not the machine's.
    useFakeClock();
    const posted: unknown[] = [];
    let done = false;
    let polls = 0;
    let reports = 0;
    const job = makeCompositionJob({ prefixes: 1000 });
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => {
        reports += 1;
        return json(200, makeReport({ composition: makeComposition({ computed: done }) }));
      },
      [STATUS]: () => {
        if (posted.length === 0) return json(200, makeCompositionStatus());
        polls += 1;
        if (polls === 1) {
          return json(
            200,
            makeCompositionStatus({
              ...job,
              status: 'running',
              started_at: '2026-12-04T09:31:00Z',
            }),
          );
        }
        done = true;
        return json(
          200,
          makeCompositionStatus({ ...job, status: 'done', finished_at: '2026-12-04T09:40:00Z' }),
        );
      },
      [START]: (init) => {
        posted.push(JSON.parse(String(init?.body)));
        return json(202, makeCompositionStatus(job));
      },
    });
    renderApp({ path: PAGE, user: carol });
    await until(() =>
      expect(screen.getByTestId('composition-job-status')).toHaveTextContent(
        'The analysis has not run for this study yet.',
      ),
    );
    expect(screen.getByTestId('composition-not-computed')).toBeInTheDocument();
    const input = within(form()).getByLabelText('Prefixes in the slice');
    expect(input).toHaveValue(4000);
    expect(input).toHaveAttribute('min', '1');
    expect(input).toHaveAttribute('max', '50000');

    fireEvent.change(input, { target: { value: '1000' } });
    fireEvent.click(runButton());
    await until(() =>
      expect(screen.getByTestId('composition-job-status')).toHaveAttribute('data-status', 'queued'),
    );
    expect(posted).toEqual([{ prefixes: 1000, seed: 0 }]);
    expect(screen.getByTestId('composition-job-status')).toHaveTextContent(
      /^Queued since .+ \(1,000 prefixes\)\.$/,
    );
    expect(runButton()).toBeDisabled();

    await advance(COMPOSITION_POLL_MS - 1);
    expect(polls).toBe(0); // not before two seconds have passed
    await advance(1);
    await until(() =>
      expect(screen.getByTestId('composition-job-status')).toHaveTextContent(
        /^Running since .+ \(1,000 prefixes\)\.$/,
      ),
    );
    expect(runButton()).toBeDisabled();
    expect(reports).toBe(1);

    await advance(COMPOSITION_POLL_MS);
    await until(() =>
      expect(screen.getByTestId('composition-job-status')).toHaveTextContent(/^Done at /),
    );
    // The report is asked again, and its figures appear without a reload.
    await until(() => expect(screen.getByTestId('chart-active')).toBeInTheDocument());
    expect(reports).toBe(2);
    expect(screen.queryByTestId('composition-not-computed')).not.toBeInTheDocument();
    expect(runButton()).toBeEnabled();
    await advance(10 * COMPOSITION_POLL_MS);
    expect(polls).toBe(2); // done: no more polling
  });

  it("shows the server's message when it refuses the job", async () => {
    const detail =
      'a slice of 40000 prefixes is larger than the corpus allows (1200 held-out sentences, 9000 mined)';
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, makeReport()),
      [STATUS]: () => json(200, makeCompositionStatus()),
      [START]: () => json(400, { detail, code: 'composition_refused' }),
    });
    renderApp({ path: PAGE, user: carol });
    const input = await screen.findByLabelText('Prefixes in the slice');
    fireEvent.change(input, { target: { value: '40000' } });
    fireEvent.click(runButton());
    const alert = await screen.findByTestId('composition-job-problem');
    expect(alert).toHaveAttribute('role', 'alert');
    expect(alert).toHaveTextContent(`The composition analysis was refused: ${detail}`);
    expect(runButton()).toBeEnabled();
  });

  it('refuses a slice size out of range without asking the server', async () => {
    const fetchMock = mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, makeReport()),
      [STATUS]: () => json(200, makeCompositionStatus()),
    });
    renderApp({ path: PAGE, user: carol });
    const input = await screen.findByLabelText('Prefixes in the slice');
    fireEvent.change(input, { target: { value: '0' } });
    fireEvent.click(runButton());
    expect(await screen.findByTestId('composition-job-problem')).toHaveTextContent(
      'Enter a whole number from 1 to 50,000.',
    );
    expect(input).toHaveAttribute('aria-invalid', 'true');
    expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'POST')).toBe(false);
  });

  it('shows why the latest job failed, and waits while one is running', async () => {
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, makeReport()),
      [STATUS]: () =>
        json(
          200,
          makeCompositionStatus(
            makeCompositionJob({
              status: 'failed',
              error: 'CUDA out of memory',
              finished_at: '2026-12-04T09:35:00Z',
            }),
          ),
        ),
    });
    renderApp({ path: PAGE, user: carol });
    expect(await screen.findByTestId('composition-job-error')).toHaveTextContent(
      'CUDA out of memory',
    );
    expect(screen.getByTestId('composition-job-status')).toHaveTextContent(
      /^Failed at .+ \(4,000 prefixes\)\.$/,
    );
    expect(runButton()).toBeEnabled();
  });

  it('keeps the button disabled while a job is queued', async () => {
    useFakeClock();
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, makeReport()),
      [STATUS]: () => json(200, makeCompositionStatus(makeCompositionJob({ status: 'queued' }))),
    });
    renderApp({ path: PAGE, user: carol });
    await until(() =>
      expect(screen.getByTestId('composition-job-status')).toHaveAttribute('data-status', 'queued'),
    );
    expect(runButton()).toBeDisabled();
    expect(form()).toHaveTextContent('A job is queued or running');
  });
});

describe('the slice size', () => {
  it('is a whole number from 1 to the largest the server takes', () => {
    expect(parsePrefixes('4000', 50000)).toBe(4000);
    expect(parsePrefixes(' 1 ', 50000)).toBe(1);
    expect(parsePrefixes('0', 50000)).toBeNull();
    expect(parsePrefixes('50001', 50000)).toBeNull();
    expect(parsePrefixes('2.5', 50000)).toBeNull();
    expect(parsePrefixes('', 50000)).toBeNull();
  });
});
