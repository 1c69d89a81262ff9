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
  },
});
