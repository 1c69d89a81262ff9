import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// Django renders the page (config/templates/frontend/index.html) and reads
// dist/.vite/manifest.json for the entry `src/main.tsx`; whitenoise serves
// dist/ under STATIC_URL, hence `base`.
export default defineConfig({
  base: '/static/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    manifest: true,
    rollupOptions: {
      input: 'src/main.tsx',
    },
  },
  test: {
    environment: 'jsdom',
    setupFiles: ['src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    restoreMocks: true,
    unstubGlobals: true,
    // One jsdom per worker, reused by its test files instead of one per file: jsdom's
    // set-up was 54 s of a 177 s run, and the whole suite takes 56 s this way. Sound
    // because every test starts from its own state: src/test/setup.ts clears storage and
    // sets the language before each test, unmounts, clears the cookie and the fake clock
    // after it, the mocks are restored, and each render makes its own QueryClient.
    // The files pass in a shuffled order too (vitest run --sequence.shuffle).
    isolate: false,
    // A test that passes in 0.5 s idle took 5.5 s on a loaded 2-core machine; past
    // the 5 s default it was cut off while still clicking into the next test's page.
    testTimeout: 30_000,
  },
});
