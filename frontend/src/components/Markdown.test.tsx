import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import { Markdown } from './Markdown';

describe('Markdown', () => {
  it('renders headings, emphasis and lists', () => {
    const { container } = render(
      <Markdown text={'# Rules\n\nLook for **three**.\n\n- one\n- two'} />,
    );
    expect(screen.getByRole('heading', { level: 1, name: 'Rules' })).toBeInTheDocument();
    expect(container.querySelector('strong')?.textContent).toBe('three');
    expect(container.querySelectorAll('li')).toHaveLength(2);
  });

  it('keeps raw HTML as inert text: no script, no img, no event handler', () => {
    const text = [
      '<script>window.pwned = 1</script>',
      '',
      'Inline <img src=x onerror="window.pwned = 2"> here.',
      '',
      '<iframe src="https://evil.example"></iframe>',
      '',
      '<a href="javascript:alert(1)" onclick="alert(2)">click</a>',
    ].join('\n');
    const { container } = render(<Markdown text={text} />);
    expect(container.querySelector('script, img, iframe, [onerror], [onclick]')).toBeNull();
    expect(container.innerHTML).not.toMatch(/<script|<img|<iframe/i);
    // The markup is shown as what it is: text.
    expect(container.textContent).toContain('<script>window.pwned = 1</script>');
    expect(container.textContent).toContain('<img src=x onerror="window.pwned = 2">');
    expect((window as unknown as { pwned?: number }).pwned).toBeUndefined();
  });

  it('links only to http(s) and mailto, apart from the app', () => {
    const text = [
      '[web](https://example.org/a) [mail](mailto:a@example.org)',
      '[js](javascript:alert(1)) [data](data:text/html,<b>x</b>) [rel](/admin/)',
      '![pic](https://example.org/p.png) ![bad](javascript:alert(3))',
    ].join('\n\n');
    const { container } = render(<Markdown text={text} />);
    const links = [...container.querySelectorAll('a')];
    expect(links.map((a) => a.getAttribute('href'))).toEqual([
      'https://example.org/a',
      'mailto:a@example.org',
      'https://example.org/p.png',
    ]);
    for (const link of links) {
      expect(link.getAttribute('rel')).toBe('noopener noreferrer');
      expect(link.getAttribute('target')).toBe('_blank');
    }
    expect(container.querySelector('img')).toBeNull();
    expect(container.textContent).toContain('js');
    expect(container.textContent).toContain('bad');
  });
});
