// One `vitest run` drives three projects: the Worker inside workerd, the daemon on Node, the page in Chromium.
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';
import { ensureRelayAssets } from './scripts/build-relay-assets.js';
import { testBindings } from './test/workers/test-env.js';

// The Worker's static assets (wrangler.toml `[assets]`) must exist for the pool and `wrangler dev` to
// start: `npm run build` lays them out; a run without it (or after a page rebuilt with Vite alone) gets
// them from the page that is built.
ensureRelayAssets();

export default defineConfig({
  test: {
    // The JSON report is what .ci/run reads for its closing "N passed, N failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-report.json' },
    projects: [
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: testBindings({
                patreonBase: inject('patreonBase'),
                cloudflareBase: inject('cloudflareBase'),
                kickBase: inject('kickBase'),
              }),
            },
          })),
        ],
        test: {
          name: 'workers',
          globalSetup: ['test/workers/global-setup.ts'],
          include: ['test/workers/**/*.test.ts', 'workers/src/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'node',
          environment: 'node',
          include: [
            'shared/**/*.test.ts',
            'daemon/src/**/*.test.ts',
            'daemon/page/src/**/*.test.ts',
            'daemon/dashboard/src/**/*.test.ts',
            'test/daemon/**/*.test.ts',
          ],
          testTimeout: 15_000,
        },
      },
      {
        test: {
          name: 'browser',
          environment: 'node',
          include: ['test/browser/**/*.test.ts'],
          globalSetup: ['test/browser/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
          // One Chromium at a time: the machine has two cores.
          fileParallelism: false,
        },
      },
      {
        test: {
          // The whole remote-access path: Gatekeeper under wrangler dev, fakes, daemon, stand-in connector, Chromium.
          name: 'e2e',
          environment: 'node',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/browser/global-setup.ts'],
          testTimeout: 60_000,
          // One `wrangler dev` start per suite (about 15 s here).
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
