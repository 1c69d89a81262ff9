import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Route, Routes } from 'react-router-dom';

import { makeQueryClient } from './api/queryClient';
import type { User } from './api/types';
import { AuthProvider } from './lib/auth';
import { AppHeader } from './components/AppHeader';
import { RequireAuth } from './features/auth/components/RequireAuth';
import { AssignmentKeysPage } from './features/workspace/routes/AssignmentKeysPage';
import { HomePage } from './features/workspace/routes/HomePage';
import { KeyWorkspacePage } from './features/workspace/routes/KeyWorkspacePage';
import { LoginPage } from './features/auth/routes/LoginPage';
import { AnnotatorsPage } from './features/manage/routes/AnnotatorsPage';
import { AnnotatorTablePage } from './features/report/routes/AnnotatorTablePage';
import { BatchPage } from './features/manage/routes/BatchPage';
import { CausalPage } from './features/causal/routes/CausalPage';
import { ManageLayout } from './features/manage/routes/ManageLayout';
import { MiningPage } from './features/manage/routes/MiningPage';
import { ReportPage } from './features/report/routes/ReportPage';
import { StudiesPage } from './features/manage/routes/StudiesPage';
import { StudyPage } from './features/manage/routes/StudyPage';
import { NotFoundPage } from './components/NotFoundPage';
import { SetPasswordPage } from './features/auth/routes/SetPasswordPage';
import { AdjudicationPage } from './features/review/routes/AdjudicationPage';
import { ReviewLayout } from './features/review/routes/ReviewLayout';
import { ReviewQueueHost } from './features/review/hooks/reviewQueue';
import { ReviewQueuePage } from './features/review/routes/ReviewQueuePage';
import { ReviewStudiesPage } from './features/review/routes/ReviewStudiesPage';
import { QueueProvider } from './lib/writeQueue/QueueContext';

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
                <Route path="studies/:studyId/causal" element={<CausalPage />} />
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
