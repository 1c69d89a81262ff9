import { useTranslation } from 'react-i18next';

import type { Assignment } from '../../../api/types';
import { Link } from 'react-router-dom';

import { ProgressBar } from '../../../components/ProgressBar';
import { StartButton } from './StartButton';
import { VisibleText } from '../../../components/patternEditor/tokenDisplay';

export function AssignmentTable({ assignments }: { assignments: Assignment[] }) {
  const { t, i18n } = useTranslation();
  const dates = new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium' });
  return (
    <table className="assignments" data-testid="assignments">
      <caption className="visually-hidden">{t('home.caption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('home.batch')}</th>
          <th scope="col">{t('home.study')}</th>
          <th scope="col">{t('home.progress')}</th>
          <th scope="col">{t('home.assigned')}</th>
          <th scope="col">
            <span className="visually-hidden">{t('home.actions')}</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {assignments.map((assignment) => {
          const counts = { submitted: assignment.keys_submitted, total: assignment.keys_total };
          const created = new Date(assignment.created_at);
          return (
            <tr key={assignment.id} data-testid="assignment-row">
              <th scope="row">
                <Link to={`/assignments/${assignment.id}`}>
                  <VisibleText text={assignment.batch_name} />
                </Link>
              </th>
              <td data-label={t('home.study')}>
                <VisibleText text={assignment.study_name} />
              </td>
              <td data-label={t('home.progress')}>
                <div className="progress-cell">
                  <ProgressBar
                    value={assignment.keys_submitted}
                    max={assignment.keys_total}
                    label={t('home.progressLabel', { batch: assignment.batch_name, ...counts })}
                  />
                  <span className="progress-text">{t('home.keysProgress', counts)}</span>
                </div>
              </td>
              <td data-label={t('home.assigned')}>
                {Number.isNaN(created.getTime()) ? (
                  assignment.created_at
                ) : (
                  <time dateTime={assignment.created_at}>{dates.format(created)}</time>
                )}
              </td>
              <td>
                <StartButton assignment={assignment} />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
