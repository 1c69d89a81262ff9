import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import i18n from '../../i18n';
import { KeyboardHelp } from './KeyboardHelp';

describe('the keyboard help', () => {
  it('is all in Chinese when the page is, the Shift + click line included', async () => {
    await i18n.changeLanguage('zh-CN');
    render(<KeyboardHelp onClose={() => {}} characterKeys />);
    const dialog = screen.getByRole('dialog', { name: '键盘快捷键' });
    expect(dialog).toHaveTextContent('Shift + 点击');
    expect(dialog.textContent).not.toMatch(/click/i);
  });
});
