import 'i18next';

import type en from './en.json';

// English is the reference catalogue: `t('...')` keys are checked against it.
declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: 'translation';
    resources: { translation: typeof en };
  }
}
