import { useCallback, useState } from 'react';
import type { RefCallback } from 'react';

/**
 * The content width of an element, in whole px, kept current as it resizes: a chart
 * lays itself out to the room it has. `null` until measured, and where the browser has
 * no ResizeObserver (the chart then keeps its own width).
 */
export function useWidth<T extends HTMLElement>(): [RefCallback<T>, number | null] {
  const [width, setWidth] = useState<number | null>(null);
  const ref = useCallback<RefCallback<T>>((node) => {
    if (node === null || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver((entries) => {
      const box = entries[0]?.contentRect;
      if (box && box.width > 0) setWidth(Math.floor(box.width));
    });
    observer.observe(node);
    // React 19: the cleanup a ref callback returns runs when the node goes away.
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}
