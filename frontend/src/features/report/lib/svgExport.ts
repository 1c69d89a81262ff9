// Turning the rendered chart into files: SVG text, and a PNG drawn through a canvas.

const SVG_NS = 'http://www.w3.org/2000/svg';
const XLINK_NS = 'http://www.w3.org/1999/xlink';
const XMLNS_NS = 'http://www.w3.org/2000/xmlns/';

/**
 * A standalone SVG document from a rendered <svg>: an XML declaration, the SVG (and
 * xlink) namespace declared on the root, and explicit width and height.
 */
export function serializeSvg(svg: SVGSVGElement): string {
  const clone = svg.cloneNode(true) as SVGSVGElement;
  // React writes a JSX `xmlns` prop as a plain attribute, which a serialiser would emit
  // next to the namespace declaration it writes itself (a duplicate attribute, so
  // invalid XML): drop every such attribute, then declare the namespaces properly.
  for (const name of ['xmlns', 'xmlns:xlink']) {
    while (clone.hasAttribute(name)) clone.removeAttribute(name);
  }
  clone.setAttributeNS(XMLNS_NS, 'xmlns', SVG_NS);
  clone.setAttributeNS(XMLNS_NS, 'xmlns:xlink', XLINK_NS);
  clone.setAttribute('version', '1.1');
  const box = clone
    .getAttribute('viewBox')
    ?.split(/[\s,]+/)
    .map(Number);
  if (box && box.length === 4) {
    if (!clone.getAttribute('width')) clone.setAttribute('width', String(box[2]));
    if (!clone.getAttribute('height')) clone.setAttribute('height', String(box[3]));
  }
  // Page-only attributes mean nothing in a file.
  for (const element of [clone, ...Array.from(clone.querySelectorAll('*'))]) {
    element.removeAttribute('data-testid');
  }
  const text = new XMLSerializer().serializeToString(clone);
  return `<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n${text}`;
}

/** Width and height of an SVG document's root, in user units. */
export function svgSize(svg: SVGSVGElement): { width: number; height: number } {
  const width = Number(svg.getAttribute('width'));
  const height = Number(svg.getAttribute('height'));
  if (width > 0 && height > 0) return { width, height };
  const box =
    svg
      .getAttribute('viewBox')
      ?.split(/[\s,]+/)
      .map(Number) ?? [];
  return { width: box[2] ?? 800, height: box[3] ?? 400 };
}

/**
 * Draw SVG text on a canvas at `scale` × its size and encode it as PNG. A data: URL
 * (not a blob: one) keeps the canvas untainted, so it can be read back.
 */
export async function svgToPng(
  svgText: string,
  size: { width: number; height: number },
  scale = 2,
): Promise<Blob> {
  const image = new Image();
  image.width = size.width;
  image.height = size.height;
  await new Promise<void>((resolve, reject) => {
    image.onload = () => resolve();
    image.onerror = () => reject(new Error('The chart could not be drawn as an image.'));
    image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svgText)}`;
  });
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(size.width * scale);
  canvas.height = Math.round(size.height * scale);
  const context = canvas.getContext('2d');
  if (!context) throw new Error('No 2D canvas in this browser.');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.drawImage(image, 0, 0, canvas.width, canvas.height);
  return new Promise<Blob>((resolve, reject) => {
    canvas.toBlob(
      (blob) => (blob ? resolve(blob) : reject(new Error('The PNG could not be encoded.'))),
      'image/png',
    );
  });
}

/** Save a blob under `filename` through a temporary <a download>. */
export function downloadBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  // Give the browser time to start the download before the URL goes away.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A file name from a study name: letters, digits, dots, dashes and underscores only. */
export function safeFileName(name: string): string {
  const cleaned = name
    .trim()
    .replace(/[^\p{L}\p{N}._-]+/gu, '-')
    .replace(/^-+|-+$/g, '');
  return cleaned || 'study';
}
