import { useTranslation } from 'react-i18next';
import { NavLink, Outlet } from 'react-router-dom';

import { useAuth } from '../../../lib/auth';
import { NotFoundPage } from '../../../components/NotFoundPage';

/** Whether this user may review (the server's IsCurator: admins and the curator group). */
export function canReview(user: { is_staff: boolean; is_curator: boolean } | null): boolean {
  return !!user && (user.is_staff || user.is_curator);
}

/**
 * The curator's screens: open to curators who are not staff (the rest of /manage is
 * not); everyone else gets the not-found page, so an annotator learns nothing of them.
 */
export function ReviewLayout() {
  const { t } = useTranslation();
  const { user } = useAuth();
  if (!user || !canReview(user)) return <NotFoundPage />;
  return (
    <div className="manage review">
      <nav aria-label={t('review.navigation')} className="tabs">
        <NavLink to="/manage/review" end>
          {t('review.studies')}
        </NavLink>
        {user.is_staff && (
          <NavLink to="/manage" end>
            {t('manage.studies')}
          </NavLink>
        )}
      </nav>
      <Outlet />
    </div>
  );
}
