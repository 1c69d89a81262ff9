import '@testing-library/jest-dom/vitest';

import { notifyManager } from '@tanstack/react-query';
import { cleanup, configure } from '@testing-library/react';
import { afterEach, beforeEach, vi } from 'vitest';

import i18n, { initI18n } from '../i18n';

initI18n('en');

// A busy machine is slow, not wrong: every wait is for a condition, and its deadline
// is generous (Testing Library's default of 1 s failed on a loaded 2-core machine).
configure({ asyncUtilTimeout: 5_000 });

// TanStack Query hands its answers to React on a `setTimeout(0)`, which a fake clock
// (test/clock.ts) never fires: in tests they go on a microtask instead, so a test under
// a fake clock sees an answer without moving the clock.
notifyManager.setScheduler(queueMicrotask);

beforeEach(async () => {
  window.localStorage.clear();
  await i18n.changeLanguage('en');
});

afterEach(() => {
  cleanup();
  vi.useRealTimers();
  document.cookie = 'csrftoken=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/';
});
