import { useTranslation } from 'react-i18next';
import { NavLink, Outlet } from 'react-router-dom';

import { useAuth } from '../../../lib/auth';

/** The admin's screens (Django staff). Not /admin/: that is Django's own admin. */
export function ManageLayout() {
  const { t } = useTranslation();
  const { user } = useAuth();
  if (!user?.is_staff) {
    return (
      <p role="alert" className="alert" data-testid="staff-only">
        {t('manage.staffOnly')}
      </p>
    );
  }
  return (
    <div className="manage">
      <nav aria-label={t('manage.navigation')} className="tabs">
        <NavLink to="/manage" end>
          {t('manage.studies')}
        </NavLink>
        <NavLink to="/manage/mining">{t('manage.mining')}</NavLink>
        <NavLink to="/manage/annotators">{t('manage.annotators')}</NavLink>
        <NavLink to="/manage/review">{t('header.review')}</NavLink>
      </nav>
      <Outlet />
    </div>
  );
}
