import ReactMarkdown from 'react-markdown';
import type { Components, UrlTransform } from 'react-markdown';

/** The schemes a link may use; anything else (javascript:, data:, a relative path) goes. */
const SAFE_URL = /^(https?:\/\/|mailto:)/i;

/** A link's or an image's address if it is http(s) or mailto, else '' (no link). */
export const safeUrl: UrlTransform = (url) => (SAFE_URL.test(url.trim()) ? url.trim() : '');

const components: Components = {
  // Every link opens apart from the app and tells the page it leaves nothing.
  a: ({ href, children }) =>
    href ? (
      <a href={href} target="_blank" rel="noopener noreferrer">
        {children}
      </a>
    ) : (
      <span>{children}</span>
    ),
  // No image is fetched from elsewhere (the CSP would refuse it, and it would tell a
  // third party who reads the guidelines): a link to it instead, named by its alt text.
  img: ({ src, alt }) =>
    typeof src === 'string' && src ? (
      <a href={src} target="_blank" rel="noopener noreferrer">
        {alt || src}
      </a>
    ) : (
      <span>{alt}</span>
    ),
};

/**
 * Markdown (a study's guidelines) rendered SAFELY: raw HTML in the text is shown as
 * text, never parsed (react-markdown without rehype-raw turns it into a text node), so a
 * `<script>` or an `<img onerror>` stays inert; links are http(s) or mailto only.
 */
export function Markdown({ text, className }: { text: string; className?: string }) {
  return (
    <div className={['markdown', className].filter(Boolean).join(' ')}>
      <ReactMarkdown urlTransform={safeUrl} components={components}>
        {text}
      </ReactMarkdown>
    </div>
  );
}
