// Renders the overlay page: the compiled HTML with the three injected globals (interface §2.9, decisions §3).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PAGE_DIST_DIR } from '../package-root.js';

export interface PageGlobals {
  overlayId: string;
  port: number;
  token: string;
}

/** Strings that JSON.stringify leaves as they are and that hold nothing scriptSafeJson would escape. */
const PLAIN_STRING = /^[A-Za-z0-9_.:-]*$/;

/** JSON that is safe inside a <script> element: no `</script>`, no `<!--`, no line separators. */
export function scriptSafeJson(value: unknown): string {
  // The globals are a UUID, a port and a base64url token on every load: skip five scans that cannot match.
  if (typeof value === 'string' && PLAIN_STRING.test(value)) return `"${value}"`;
  if (typeof value === 'number') return JSON.stringify(value);
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
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

/** A page cut where the globals go: right after the opening <head> tag, or at the very start without one. */
interface SplitPage {
  before: string;
  after: string;
}

function splitAtHead(html: string): SplitPage {
  const head = /<head[^>]*>/i.exec(html);
  if (!head) return { before: '', after: html };
  const at = head.index + head[0].length;
  return { before: html.slice(0, at), after: html.slice(at) };
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
