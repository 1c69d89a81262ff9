import { useTranslation } from 'react-i18next';
import { Route, Routes } from 'react-router-dom';

import type { User } from './api/types';
import { AuthProvider } from './auth/AuthContext';
import { AppHeader } from './components/AppHeader';
import { RequireAuth } from './components/RequireAuth';
import { HomePage } from './pages/HomePage';
import { LoginPage } from './pages/LoginPage';
import { NotFoundPage } from './pages/NotFoundPage';

const MAIN_ID = 'main';

/**
 * Routes of the single-page app. The router itself comes from outside
 * (BrowserRouter in main.tsx, MemoryRouter in tests). Django serves this page for
 * every path that is not /api/, /admin/ or /static/.
 */
export function App({ initialUser }: { initialUser?: User | null }) {
  const { t } = useTranslation();
  return (
    <AuthProvider initialUser={initialUser}>
      <a className="skip-link" href={`#${MAIN_ID}`}>
        {t('app.skipToContent')}
      </a>
      <AppHeader />
      <main id={MAIN_ID} tabIndex={-1}>
        <Routes>
          <Route path="/login" element={<LoginPage />} />
          <Route
            path="/"
            element={
              <RequireAuth>
                <HomePage />
              </RequireAuth>
            }
          />
          <Route path="*" element={<NotFoundPage />} />
        </Routes>
      </main>
    </AuthProvider>
  );
}
