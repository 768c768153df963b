// Renders the overlay page: the compiled HTML with the three injected globals (interface §2.9, decisions §3).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PAGE_DIST_DIR } from './package-root.js';

export interface PageGlobals {
  overlayId: string;
  port: number;
  token: string;
}

/** JSON that is safe inside a <script> element: no `</script>`, no `<!--`, no line separators. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export function globalsScript(globals: PageGlobals): string {
  return (
    '<script>' +
    `window.__APP_OVERLAY_ID__=${scriptSafeJson(globals.overlayId)};` +
    `window.__APP_PORT__=${scriptSafeJson(globals.port)};` +
    `window.__APP_TOKEN__=${scriptSafeJson(globals.token)};` +
    '</script>'
  );
}

/** Inserts the globals as the first thing in <head>, so they exist before any module script runs. */
export function injectGlobals(html: string, globals: PageGlobals): string {
  const head = /<head[^>]*>/i.exec(html);
  if (!head) return globalsScript(globals) + html;
  const at = head.index + head[0].length;
  return html.slice(0, at) + globalsScript(globals) + html.slice(at);
}

let compiledPage: string | undefined;

/** The production page, read once; `npm run build` produces it. */
export function compiledOverlayPage(): string {
  if (compiledPage === undefined) {
    try {
      compiledPage = readFileSync(join(PAGE_DIST_DIR, 'index.html'), 'utf8');
    } catch {
      throw new Error(`The compiled overlay page is missing in ${PAGE_DIST_DIR}: run "npm run build".`);
    }
  }
  return compiledPage;
}

/** Production: the compiled page (asset URLs already under /overlay-assets/) with fresh globals. */
export function compiledPageRenderer(port: () => number) {
  return {
    render: async (overlayId: string, token: string) =>
      injectGlobals(compiledOverlayPage(), { overlayId, port: port(), token }),
  };
}
