// Renders the overlay page: the compiled HTML with the three injected globals (interface §2.9, decisions §3).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type SplitPage, scriptSafeJson, splitAtHead } from '../../../shared/page-globals.js';
import { PAGE_DIST_DIR } from '../package-root.js';

export interface PageGlobals {
  overlayId: string;
  port: number;
  token: string;
}

function globalsScript(globals: PageGlobals): string {
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
  const { before, after } = splitAtHead(html);
  return before + globalsScript(globals) + after;
}

let compiledPage: SplitPage | undefined;

/** The production page, read and cut at the injection point once; `npm run build` produces it. */
function compiledOverlayPage(): SplitPage {
  if (compiledPage === undefined) {
    let html: string;
    try {
      html = readFileSync(join(PAGE_DIST_DIR, 'index.html'), 'utf8');
    } catch {
      throw new Error(`The compiled overlay page is missing in ${PAGE_DIST_DIR}: run "npm run build".`);
    }
    compiledPage = splitAtHead(html);
  }
  return compiledPage;
}

/** Production: the compiled page (asset URLs already under /overlay-assets/) with fresh globals. */
export function compiledPageRenderer(port: () => number) {
  return {
    render: (overlayId: string, token: string) => {
      const { before, after } = compiledOverlayPage();
      return before + globalsScript({ overlayId, port: port(), token }) + after;
    },
  };
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);

/**
 * What an error under /overlay/ answers instead of JSON: OBS draws whatever a browser source loads over
 * the scene, so a deleted overlay or a refused load must show nothing on stream. A transparent, empty
 * page with the right status; the reason is in the markup (hidden) for whoever opens it in a browser.
 */
export function overlayErrorPage(code: string, message: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="robots" content="noindex"><title>Overlay unavailable</title><link rel="icon" href="data:,">' +
    '<style>html,body{margin:0;background:transparent}</style></head>' +
    `<body><p hidden data-error-code="${escapeHtml(code)}">${escapeHtml(message)}</p></body></html>`
  );
}

/** Whether a request's target is an overlay page (any case, any query), where errors stay off stream. */
export function isOverlayPagePath(url: string | undefined): boolean {
  return /^\/overlay\//i.test(url ?? '');
}
