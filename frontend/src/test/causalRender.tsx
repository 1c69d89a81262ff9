// Rendering a result view on its own in tests: a router for its key links, English numbers.
import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import { MemoryRouter } from 'react-router-dom';
import { vi } from 'vitest';

import { makeCausalFormatters } from '../features/causal/lib/format';

export const f = makeCausalFormatters('en');

export function renderView(view: ReactElement) {
  return render(<MemoryRouter>{view}</MemoryRouter>);
}

/** The files the page saves (through a temporary <a download>), with their contents. */
export function captureDownloads(): { name: string; blob: Blob }[] {
  const saved: { name: string; blob: Blob }[] = [];
  let lastBlob: Blob | null = null;
  vi.spyOn(URL, 'createObjectURL').mockImplementation((blob) => {
    lastBlob = blob as Blob;
    return 'blob:causal';
  });
  vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => {});
  vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (
    this: HTMLAnchorElement,
  ) {
    saved.push({ name: this.download, blob: lastBlob! });
  });
  return saved;
}
