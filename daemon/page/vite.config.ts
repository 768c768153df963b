// Builds the overlay page into dist/page; asset URLs are emitted under /overlay-assets/ (interface §4.2).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/overlay-assets/',
  build: {
    outDir: fileURLToPath(new URL('../../dist/page', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
  },
  logLevel: 'warn',
});
