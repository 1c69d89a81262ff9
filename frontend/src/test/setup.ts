import '@testing-library/jest-dom/vitest';

import { notifyManager } from '@tanstack/react-query';
import { cleanup, configure } from '@testing-library/react';
import { afterEach, beforeEach, vi } from 'vitest';

import i18n, { initI18n } from '../i18n';

initI18n('en');

// jsdom has no modal dialogs (HTMLDialogElement has `open` but no showModal/close):
// these two set and clear `open` as a browser does. What a modal really does (the
// inert page, focus kept inside) is tested in Chromium (tests/e2e/test_workspace.py).
if (typeof HTMLDialogElement !== 'undefined' && !HTMLDialogElement.prototype.showModal) {
  HTMLDialogElement.prototype.showModal = function showModal(this: HTMLDialogElement) {
    this.setAttribute('open', '');
  };
  HTMLDialogElement.prototype.close = function close(this: HTMLDialogElement) {
    if (!this.hasAttribute('open')) return;
    this.removeAttribute('open');
    this.dispatchEvent(new Event('close'));
  };
}

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
