// The viewer page of a public overlay: `GET /v/<subdomain>/<overlayId>` answers the compiled overlay
// page (the daemon's own, from the Worker's static assets) with the globals that make it a receive-only
// viewer of the relay, and `GET /overlay-assets/*` its scripts and styles. Nothing is served while the
// overlay is not published.
import { Hono } from 'hono';
import { type SplitPage, scriptSafeJson, splitAtHead } from '../../../shared/page-globals.js';
import type { AppEnv, GatekeeperEnv } from '../env.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import { hubOf, OVERLAY_ID, SUBDOMAIN } from './names.js';

/** Whether the overlay `overlayId` of the member behind `subdomain` is published now. */
export type PublishedCheck = (env: GatekeeperEnv, subdomain: string, overlayId: string) => Promise<boolean>;

/** Asks the overlay's hub (`OverlayRelay`, one per published overlay): it holds a snapshot and the member is Premium. */
export const hubPublished: PublishedCheck = (env, subdomain, overlayId) =>
  hubOf(env, subdomain, overlayId).published();

/** 404 `not_found` unless the address names a well-formed, published overlay. */
export async function requirePublished(
  env: GatekeeperEnv,
  published: PublishedCheck,
  subdomain: string,
  overlayId: string,
): Promise<void> {
  if (
    !SUBDOMAIN.test(subdomain) ||
    !OVERLAY_ID.test(overlayId) ||
    !(await published(env, subdomain, overlayId))
  ) {
    throw new ApiError('not_found', 'No published overlay here');
  }
}

/** Where the page's own files are: the Vite `base` of daemon/page, and the folder in the static assets. */
export const PAGE_ASSETS_PATH = '/overlay-assets/';
const PAGE_HTML_PATH = `${PAGE_ASSETS_PATH}index.html`;

/** The script the page finds first in <head>: its overlay, and the relay socket instead of a token. */
export function viewerGlobals(subdomain: string, overlayId: string): string {
  return (
    `window.__APP_OVERLAY_ID__=${scriptSafeJson(overlayId)};` +
    `window.__APP_RELAY__=${scriptSafeJson(`/v/${subdomain}/${overlayId}/ws`)};`
  );
}

async function sha256Base64(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  let binary = '';
  for (const byte of digest) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * What the viewer page may do: its own scripts and styles and the one inline script of globals (by
 * hash), pictures, sounds and videos from this origin (media are at /v/…/assets/), and its socket to
 * this origin. Framing stays allowed: the page has no controls, and a site may embed a stream's overlay.
 */
export function viewerPageCsp(globalsHash: string): string {
  return [
    "default-src 'none'",
    `script-src 'self' 'sha256-${globalsHash}'`,
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "media-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

// The static assets are fixed for a deployment: the page is read once per isolate.
let compiledPage: Promise<SplitPage> | undefined;

function readCompiledPage(env: GatekeeperEnv, origin: string): Promise<SplitPage> {
  if (!compiledPage) {
    compiledPage = env.ASSETS.fetch(new URL(PAGE_HTML_PATH, origin)).then(async (res) => {
      if (!res.ok) {
        await res.body?.cancel();
        throw new Error(`the compiled overlay page is missing from the static assets (${res.status})`);
      }
      return splitAtHead(await res.text());
    });
    // A failed read is tried again on the next request rather than kept.
    compiledPage.catch(() => {
      compiledPage = undefined;
    });
  }
  return compiledPage;
}

/** The viewer page of one overlay: the compiled page with its globals first in <head>. */
export async function renderViewerPage(
  env: GatekeeperEnv,
  origin: string,
  subdomain: string,
  overlayId: string,
): Promise<Response> {
  const { before, after } = await readCompiledPage(env, origin);
  const globals = viewerGlobals(subdomain, overlayId);
  return new Response(`${before}<script>${globals}</script>${after}`, {
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      // Never kept: once the overlay is no longer published the address must answer 404.
      'Cache-Control': 'no-store',
      'Content-Security-Policy': viewerPageCsp(await sha256Base64(globals)),
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    },
  });
}

/** The page's hashed files never change under one name: browsers keep them. */
const HASHED_FILE = /^\/overlay-assets\/assets\/[^/]+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$/;

/** `GET /overlay-assets/*`: the page's own files from the static assets; the bare HTML only through /v/…. */
export async function servePageAsset(env: GatekeeperEnv, request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === PAGE_HTML_PATH || url.pathname.endsWith('/')) {
    throw new ApiError('not_found', 'No such file');
  }
  const res = await env.ASSETS.fetch(new Request(url, { method: request.method, headers: request.headers }));
  if (res.status === 404) {
    await res.body?.cancel();
    throw new ApiError('not_found', 'No such file');
  }
  const headers = new Headers(res.headers);
  headers.set('X-Content-Type-Options', 'nosniff');
  if (res.status === 200 && HASHED_FILE.test(url.pathname)) {
    headers.set('Cache-Control', 'public, max-age=31536000, immutable');
  }
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

/** The viewer page and its files. `published` is the hub's answer; tests may stand in for it. */
export function relayPageRoutes(options: { published?: PublishedCheck } = {}): Hono<AppEnv> {
  const published = options.published ?? hubPublished;
  const routes = new Hono<AppEnv>();
  routes.get('/v/:subdomain/:overlayId', async (c) => {
    const { subdomain, overlayId } = c.req.param();
    await requirePublished(c.env, published, subdomain, overlayId);
    return renderViewerPage(c.env, new URL(c.req.url).origin, subdomain, overlayId);
  });
  routes.all('/v/:subdomain/:overlayId', methodNotAllowed('GET'));
  routes.get('/overlay-assets/*', (c) => servePageAsset(c.env, c.req.raw));
  routes.all('/overlay-assets/*', methodNotAllowed('GET'));
  return routes;
}
