import { useTranslation } from 'react-i18next';
import { Link } from 'react-router-dom';

import type { AnnotationState, KeyDetail } from '../../../api/types';
import { VisibleText } from '../../../components/patternEditor/tokenDisplay';

/**
 * The workspace's heading: the way back, the key (layer and index), its study, the
 * annotation's status and how many of its prefixes no pattern covers yet.
 */
export function KeyHeading({
  backTo,
  detail,
  status,
  notCovered,
  total,
}: {
  backTo: string;
  detail: KeyDetail;
  status: AnnotationState['status'] | undefined;
  notCovered: number;
  total: number;
}) {
  const { t } = useTranslation();
  return (
    <div>
      <Link to={backTo} className="back-link">
        {t('workspace.back')}
      </Link>
      <h1 id="workspace-heading">
        {t('workspace.heading', { layer: detail.layer, index: detail.index })}
      </h1>
      <p className="muted">
        <VisibleText text={detail.study_name} /> ·{' '}
        <span className={`status-badge status-${status}`} data-testid="annotation-status">
          {t(`status.${status ?? 'draft'}`)}
        </span>{' '}
        ·{' '}
        <span data-testid="not-covered-count">
          {t('workspace.notCoveredCount', { count: notCovered, total })}
        </span>
      </p>
    </div>
  );
}
