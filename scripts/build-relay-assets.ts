// Lays out the Gatekeeper's static assets (wrangler.toml `[assets]`): the compiled overlay page of
// dist/page under /overlay-assets/, the path its HTML names its files by. `npm run build` runs it after
// building the page; `wrangler dev`, `wrangler deploy` and the Workers test pool read the result.
//
// Usage: tsx scripts/build-relay-assets.ts
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** wrangler.toml `[assets] directory`, relative to the repository. */
export const RELAY_ASSETS_DIR = 'dist/relay-assets';
/** Where the page's files are, below that directory: the page's Vite `base`. */
export const PAGE_ASSETS_PREFIX = 'overlay-assets';

/**
 * Copies dist/page to dist/relay-assets/overlay-assets, replacing what was there in one rename. Without
 * a built page it leaves an empty directory, so the Worker still starts (its viewer page answers 500
 * until `npm run build` ran); returns whether the page was there.
 */
export function layoutRelayAssets(root = ROOT): boolean {
  const page = join(root, 'dist/page');
  const target = join(root, RELAY_ASSETS_DIR);
  const staging = `${target}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const built = existsSync(join(page, 'index.html'));
  if (built) cpSync(page, join(staging, PAGE_ASSETS_PREFIX), { recursive: true });
  rmSync(target, { recursive: true, force: true });
  renameSync(staging, target);
  return built;
}

/** Lays the assets out only when there are none yet (the Workers test pool refuses to start without them). */
export function ensureRelayAssets(root = ROOT): void {
  if (!existsSync(join(root, RELAY_ASSETS_DIR))) layoutRelayAssets(root);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!layoutRelayAssets()) {
    process.stderr.write('dist/page is missing: build the overlay page first (npm run build)\n');
    process.exitCode = 1;
  }
}
