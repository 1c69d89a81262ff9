// Every read and every invalidation names its query key through a feature's factory
// (features/<feature>/api/queryKeys.ts), so that a write can name what it makes stale
// and no two screens spell the same key two ways.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { describe, expect, it } from 'vitest';

const SRC = join(__dirname, '..');
const FACTORY = /^features\/[^/]+\/api\/queryKeys\.ts$/;
/** An array written where a query key is expected: `queryKey: [`, `setQueryData([`. */
const INLINE_KEY = /queryKey\s*:\s*\[|(?:set|get)QueryData(?:<[^>]*>)?\(\s*\[/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

function inlineKeys(text: string): number[] {
  return text.split('\n').flatMap((line, index) => (INLINE_KEY.test(line) ? [index + 1] : []));
}

describe('query keys', () => {
  it('finds an inline key, as written in a query or in the cache', () => {
    expect(inlineKeys("useQuery({ queryKey: ['assignments'] });")).toEqual([1]);
    expect(inlineKeys("a;\nclient.setQueryData<X>(['key', 1], x);")).toEqual([2]);
    expect(inlineKeys('useQuery({ queryKey: workspaceKeys.assignments() });')).toEqual([]);
  });

  it('come from the factories only: no inline queryKey array outside them', () => {
    const offenders = sources(SRC)
      .map((path) => relative(SRC, path).split('\\').join('/'))
      .filter((name) => !FACTORY.test(name))
      .flatMap((name) =>
        inlineKeys(readFileSync(join(SRC, name), 'utf8')).map((line) => `${name}:${line}`),
      );
    expect(offenders).toEqual([]);
  });
});
