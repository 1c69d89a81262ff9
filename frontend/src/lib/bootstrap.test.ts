import { afterEach, describe, expect, it } from 'vitest';

import { BOOTSTRAP_ELEMENT_ID, readBootstrap } from './bootstrap';
import { alice } from '../test/utils';

function renderBootstrap(text: string) {
  const script = document.createElement('script');
  script.id = BOOTSTRAP_ELEMENT_ID;
  script.type = 'application/json';
  script.textContent = text;
  document.body.append(script);
}

describe('readBootstrap', () => {
  afterEach(() => document.getElementById(BOOTSTRAP_ELEMENT_ID)?.remove());

  it('reads the signed-in user that Django rendered', () => {
    renderBootstrap(JSON.stringify({ user: alice }));
    expect(readBootstrap()).toEqual({ user: alice });
  });

  it('reads an anonymous visitor as user null', () => {
    renderBootstrap('{"user": null}');
    expect(readBootstrap()).toEqual({ user: null });
  });

  it('is undefined when the element is missing or broken, so the app asks the API', () => {
    expect(readBootstrap()).toBeUndefined();
    renderBootstrap('{not json');
    expect(readBootstrap()).toBeUndefined();
  });
});
