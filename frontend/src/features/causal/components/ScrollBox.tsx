import type { ReactNode } from 'react';

/**
 * A box that scrolls sideways when what it holds is wider than the page (a heatmap of a
 * long prompt, a table of many tokens), so that the page itself never does. It takes
 * focus, so that the arrow keys scroll it without a mouse.
 */
export function ScrollBox({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div
      className="scroll-box"
      role="region"
      aria-label={label}
      // A scrollable region must be reachable by keyboard (WCAG 2.1.1).
      // eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex
      tabIndex={0}
    >
      {children}
    </div>
  );
}
