// Builds the streamer's dashboard into dist/dashboard, served by the daemon under /dashboard/.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  // Preact through esbuild's automatic JSX runtime: no framework plugin needed.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('../../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
  },
  logLevel: 'warn',
});
