// Lays out the Gatekeeper's static assets (wrangler.toml `[assets]`): the compiled overlay page of
// dist/page under /overlay-assets/, the path its HTML names its files by. `npm run build` runs it after
// building the page; `wrangler dev`, `wrangler deploy` and the Workers test pool read the result.
//
// Usage: tsx scripts/build-relay-assets.ts [--if-stale]
//   --if-stale: only when missing or older than dist/page, and never failing (wrangler.toml `[build]`).
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** wrangler.toml `[assets] directory`, relative to the repository. */
export const RELAY_ASSETS_DIR = 'dist/relay-assets';
/** Where the page's files are, below that directory: the page's Vite `base`. */
export const PAGE_ASSETS_PREFIX = 'overlay-assets';

/**
 * Copies dist/page to dist/relay-assets/overlay-assets, swapping the whole directory in by renames.
 * Without a built page it leaves an empty directory, so the Worker still starts (its viewer page
 * answers 500 until `npm run build` ran); returns whether the page was there.
 */
export function layoutRelayAssets(root = ROOT): boolean {
  const page = join(root, 'dist/page');
  const target = join(root, RELAY_ASSETS_DIR);
  const staging = `${target}.tmp-${process.pid}`;
  const old = `${target}.old-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const built = existsSync(join(page, 'index.html'));
  if (built) cpSync(page, join(staging, PAGE_ASSETS_PREFIX), { recursive: true });
  try {
    renameSync(target, old);
  } catch {
    // None yet, or another process is swapping it at this moment.
  }
  try {
    renameSync(staging, target);
  } catch {
    // Another process put its copy (of the same page) in place first.
  }
  rmSync(staging, { recursive: true, force: true });
  rmSync(old, { recursive: true, force: true });
  return built;
}

/** Whether the laid-out page is the one in dist/page (its HTML names every hashed file it loads). */
function layoutIsCurrent(root: string): boolean {
  const html = (dir: string) => readFileSync(join(root, dir, 'index.html'), 'utf8');
  try {
    return html('dist/page') === html(join(RELAY_ASSETS_DIR, PAGE_ASSETS_PREFIX));
  } catch {
    return existsSync(join(root, RELAY_ASSETS_DIR)) && !existsSync(join(root, 'dist/page/index.html'));
  }
}

/**
 * Lays the assets out when they are missing or older than dist/page (a page rebuilt with Vite alone):
 * the Workers test pool refuses to start without them, and `wrangler dev` would serve a stale page.
 */
export function ensureRelayAssets(root = ROOT): void {
  if (!layoutIsCurrent(root)) layoutRelayAssets(root);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--if-stale')) ensureRelayAssets();
  else if (!layoutRelayAssets()) {
    process.stderr.write('dist/page is missing: build the overlay page first (npm run build)\n');
    process.exitCode = 1;
  }
}
