import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import type { PreparingStudy } from '../../../api/types';
import i18n from '../../../i18n';
import { advance, until, useFakeClock } from '../../../test/clock';
import { alice, json, makeAssignment, mockApi, renderApp } from '../../../test/utils';
import { PreparingNotice } from './PreparingNotice';
import { PREPARING_POLL_MS } from '../hooks/usePreparing';

function makePreparing(overrides: Partial<PreparingStudy> = {}): PreparingStudy {
  return {
    id: 4,
    study_name: 'demo: SmolLM2-135M on wiki-vital',
    status: 'mining',
    progress: {
      sentences_done: 1200,
      sentences_total: 3000,
      tokens_done: 36000,
      tokens_total: 90600,
      eta_seconds: 150,
    },
    ...overrides,
  };
}

describe('PreparingNotice', () => {
  it('says the keys are being mined, with a labelled progress bar and the counts', () => {
    render(<PreparingNotice runs={[makePreparing()]} />);
    const notice = screen.getByRole('region', { name: 'Your keys are being mined' });
    const run = within(notice).getByTestId('preparing-run');
    expect(run).toHaveTextContent('demo: SmolLM2-135M on wiki-vital');
    expect(run).toHaveTextContent('Mining');
    const bar = within(run).getByRole('progressbar');
    expect(bar).toHaveAccessibleName(
      'Mining demo: SmolLM2-135M on wiki-vital: 1,200 of 3,000 sentences',
    );
    expect(bar).toHaveAttribute('aria-valuenow', '1200');
    expect(bar).toHaveAttribute('aria-valuemax', '3000');
    expect(bar.firstElementChild).toHaveStyle({ width: '40%' });
    expect(within(run).getByTestId('preparing-counts')).toHaveTextContent(
      '1,200 / 3,000 sentences · 36,000 / 90,600 tokens · about 3 minutes left',
    );
  });

  it('shows no counts before the corpus is read, and nothing at all without a run', () => {
    const queued = makePreparing({
      status: 'queued',
      progress: {
        sentences_done: 0,
        sentences_total: 0,
        tokens_done: 0,
        tokens_total: 0,
        eta_seconds: null,
      },
    });
    const { unmount } = render(<PreparingNotice runs={[queued]} />);
    expect(screen.getByTestId('preparing-run')).toHaveTextContent('Waiting for a worker');
    expect(screen.queryByTestId('preparing-counts')).not.toBeInTheDocument();
    unmount();
    render(<PreparingNotice runs={[]} />);
    expect(screen.queryByTestId('preparing')).not.toBeInTheDocument();
  });

  it('reads in Simplified Chinese', async () => {
    await i18n.changeLanguage('zh-CN');
    render(
      <PreparingNotice
        runs={[makePreparing({ progress: { ...makePreparing().progress, eta_seconds: 50 } })]}
      />,
    );
    expect(screen.getByRole('region', { name: '正在为你挖掘待标注的键' })).toBeInTheDocument();
    expect(screen.getByTestId('preparing-counts')).toHaveTextContent(
      '1,200 / 3,000 句 · 36,000 / 90,600 个词元 · 大约还需 1 分钟',
    );
  });
});

describe('the annotator home while a study is mined for her', () => {
  it('shows the progress instead of an empty list, then her keys when the run ends', async () => {
    useFakeClock();
    // The run ends at the third poll of the preparing list; her assignment exists from
    // then on (the server gives it in the transaction that ends the run).
    let polls = 0;
    const done = () => polls >= 3;
    const calls = mockApi({
      'GET /api/preparing/': () => {
        polls += 1;
        if (done()) return json(200, []);
        const sentences_done = 1000 * polls;
        return json(200, [
          makePreparing({ progress: { ...makePreparing().progress, sentences_done } }),
        ]);
      },
      'GET /api/assignments/': () =>
        json(
          200,
          done()
            ? [makeAssignment({ batch_name: 'demo batch', keys_submitted: 0, keys_total: 60 })]
            : [],
        ),
    });
    renderApp({ user: alice });

    const bar = await until(() => screen.getByRole('progressbar'));
    expect(bar).toHaveAttribute('aria-valuenow', '1000');
    expect(screen.queryByTestId('assignments-empty')).not.toBeInTheDocument();
    expect(screen.queryByRole('table')).not.toBeInTheDocument();

    await advance(PREPARING_POLL_MS);
    await until(() => expect(bar).toHaveAttribute('aria-valuenow', '2000'));
    const assignmentCalls = () => calls.mock.calls.filter(([path]) => path === '/api/assignments/');
    expect(assignmentCalls()).toHaveLength(1); // progress alone does not refetch them

    await advance(PREPARING_POLL_MS);
    const table = await until(() => screen.getByRole('table'));
    expect(within(table).getByTestId('assignment-row')).toHaveTextContent('demo batch');
    expect(screen.queryByTestId('preparing')).not.toBeInTheDocument();
    expect(screen.queryByTestId('assignments-empty')).not.toBeInTheDocument();
    expect(assignmentCalls()).toHaveLength(2);

    // Nothing is being prepared any more: the polling stops.
    const before = polls;
    await advance(10 * PREPARING_POLL_MS);
    expect(polls).toBe(before);
  });

  it('shows the empty list when nothing is being mined for her', async () => {
    mockApi({
      'GET /api/preparing/': () => json(200, []),
      'GET /api/assignments/': () => json(200, []),
    });
    renderApp({ user: alice });
    expect(await screen.findByTestId('assignments-empty')).toBeInTheDocument();
    expect(screen.queryByTestId('preparing')).not.toBeInTheDocument();
  });
});
