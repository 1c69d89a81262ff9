import './styles.css';

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router-dom';

import { App } from './App';
import { readBootstrap } from './lib/bootstrap';
import { initI18n } from './i18n';

initI18n();

const root = document.getElementById('root');
if (!root) throw new Error('ffkv: the page has no #root element');

createRoot(root).render(
  <StrictMode>
    <BrowserRouter>
      <App initialUser={readBootstrap()?.user} />
    </BrowserRouter>
  </StrictMode>,
);
