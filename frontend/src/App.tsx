import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Route, Routes } from 'react-router-dom';

import { makeQueryClient } from './api/queryClient';
import type { User } from './api/types';
import { AuthProvider } from './auth/AuthContext';
import { AppHeader } from './components/AppHeader';
import { RequireAuth } from './components/RequireAuth';
import { AssignmentKeysPage } from './pages/AssignmentKeysPage';
import { HomePage } from './pages/HomePage';
import { KeyWorkspacePage } from './pages/KeyWorkspacePage';
import { LoginPage } from './pages/LoginPage';
import { AnnotatorsPage } from './pages/manage/AnnotatorsPage';
import { AnnotatorTablePage } from './pages/manage/AnnotatorTablePage';
import { BatchPage } from './pages/manage/BatchPage';
import { ManageLayout } from './pages/manage/ManageLayout';
import { MiningPage } from './pages/manage/MiningPage';
import { ReportPage } from './pages/manage/report/ReportPage';
import { StudiesPage } from './pages/manage/StudiesPage';
import { StudyPage } from './pages/manage/StudyPage';
import { NotFoundPage } from './pages/NotFoundPage';
import { SetPasswordPage } from './pages/SetPasswordPage';
import { AdjudicationPage } from './review/AdjudicationPage';
import { ReviewLayout } from './review/ReviewLayout';
import { ReviewQueueHost } from './review/reviewQueue';
import { ReviewQueuePage } from './review/ReviewQueuePage';
import { ReviewStudiesPage } from './review/ReviewStudiesPage';
import { QueueProvider } from './workspace/QueueContext';

const MAIN_ID = 'main';

/**
 * Routes of the single-page app. The router itself comes from outside
 * (BrowserRouter in main.tsx, MemoryRouter in tests). Django serves this page for
 * every path that is not /api/, /admin/ or /static/: the admin's screens live under
 * /manage, because /admin/ is Django's own admin.
 */
export function App({
  initialUser,
  queryClient,
}: {
  initialUser?: User | null;
  queryClient?: QueryClient;
}) {
  const { t } = useTranslation();
  // One cache per mounted app, so that tests never share answers.
  const [client] = useState(() => queryClient ?? makeQueryClient());
  return (
    <QueryClientProvider client={client}>
      <AuthProvider initialUser={initialUser}>
        <QueueProvider>
          <a className="skip-link" href={`#${MAIN_ID}`}>
            {t('app.skipToContent')}
          </a>
          <AppHeader />
          <ReviewQueueHost />
          <main id={MAIN_ID} tabIndex={-1}>
            <Routes>
              <Route path="/login" element={<LoginPage />} />
              <Route path="/set-password" element={<SetPasswordPage />} />
              <Route
                path="/"
                element={
                  <RequireAuth>
                    <HomePage />
                  </RequireAuth>
                }
              />
              <Route
                path="/assignments/:assignmentId"
                element={
                  <RequireAuth>
                    <AssignmentKeysPage />
                  </RequireAuth>
                }
              />
              <Route
                path="/keys/:keyId"
                element={
                  <RequireAuth>
                    <KeyWorkspacePage />
                  </RequireAuth>
                }
              />
              <Route
                path="/manage"
                element={
                  <RequireAuth>
                    <ManageLayout />
                  </RequireAuth>
                }
              >
                <Route index element={<StudiesPage />} />
                <Route path="studies/:studyId" element={<StudyPage />} />
                <Route path="studies/:studyId/batches/:batchId" element={<BatchPage />} />
                <Route path="studies/:studyId/report" element={<ReportPage />} />
                <Route path="studies/:studyId/annotators" element={<AnnotatorTablePage />} />
                <Route path="mining" element={<MiningPage />} />
                <Route path="annotators" element={<AnnotatorsPage />} />
              </Route>
              {/* The curator's review: curators who are not staff reach these, not the rest of /manage. */}
              <Route
                element={
                  <RequireAuth>
                    <ReviewLayout />
                  </RequireAuth>
                }
              >
                <Route path="/manage/review" element={<ReviewStudiesPage />} />
                <Route path="/manage/review/keys/:keyId" element={<AdjudicationPage />} />
                <Route path="/manage/studies/:studyId/review" element={<ReviewQueuePage />} />
              </Route>
              <Route path="*" element={<NotFoundPage />} />
            </Routes>
          </main>
        </QueueProvider>
      </AuthProvider>
    </QueryClientProvider>
  );
}
