import { useEffect, useRef } from 'react';
import type { ReactNode, RefObject } from 'react';

const FOCUSABLE = 'button, [href], input, select, textarea, [tabindex]:not([tabindex="-1"])';

interface ModalProps {
  labelledBy: string;
  onClose: () => void;
  /** Focused on opening; the first focusable element otherwise. */
  initialFocus?: RefObject<HTMLElement | null>;
  /** Keys that close it besides Escape (the help's own `?`). */
  closeKeys?: readonly string[];
  className?: string;
  testId?: string;
  children: ReactNode;
}

/**
 * A modal `<dialog>`: the rest of the page is inert while it is open, Tab and
 * Shift+Tab go round inside it, Escape or a click on the backdrop closes it, and
 * focus goes back where it was.
 */
export function Modal({
  labelledBy,
  onClose,
  initialFocus,
  closeKeys = [],
  className,
  testId,
  children,
}: ModalProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const close = useRef(onClose);
  close.current = onClose;

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const previous = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (!dialog.open) dialog.showModal();
    (initialFocus?.current ?? dialog.querySelector<HTMLElement>(FOCUSABLE))?.focus();
    return () => {
      if (dialog.open) dialog.close();
      if (previous?.isConnected) previous.focus();
    };
  }, [initialFocus]);

  return (
    // A click on the backdrop closes it, as Escape does (onCancel): a mouse convenience
    // beside the keyboard's way, not the only one.
    // eslint-disable-next-line jsx-a11y/no-noninteractive-element-interactions
    <dialog
      ref={ref}
      className={['dialog card', className].filter(Boolean).join(' ')}
      aria-labelledby={labelledBy}
      data-testid={testId}
      onCancel={(event) => {
        event.preventDefault(); // React owns whether it is open
        close.current();
      }}
      onClick={(event) => {
        // A click on the backdrop targets the dialog itself, as does one on its padding:
        // only one outside its box closes it.
        const dialog = ref.current;
        if (event.target !== dialog || !dialog) return;
        const box = dialog.getBoundingClientRect();
        const inside =
          event.clientX >= box.left &&
          event.clientX <= box.right &&
          event.clientY >= box.top &&
          event.clientY <= box.bottom;
        if (!inside) close.current();
      }}
      onKeyDown={(event) => {
        event.stopPropagation(); // the workspace's keys stay out of the dialog
        if (event.key === 'Escape' || closeKeys.includes(event.key)) {
          event.preventDefault();
          close.current();
        } else if (event.key === 'Tab') {
          const items = [...(ref.current?.querySelectorAll<HTMLElement>(FOCUSABLE) ?? [])];
          const first = items[0];
          const last = items[items.length - 1];
          if (!first || !last) return;
          const active = document.activeElement;
          if (event.shiftKey && (active === first || !ref.current?.contains(active))) {
            event.preventDefault();
            last.focus();
          } else if (!event.shiftKey && (active === last || !ref.current?.contains(active))) {
            event.preventDefault();
            first.focus();
          }
        }
      }}
    >
      {children}
    </dialog>
  );
}
