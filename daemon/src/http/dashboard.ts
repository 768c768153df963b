// Serves the streamer's dashboard (dist/dashboard, built by Vite) at /dashboard, to loopback clients only.
import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Polka } from 'polka';
import sirv from 'sirv';
import { PACKAGE_ROOT } from '../package-root.js';
import { classifyHost, isLocalControlClient } from './policy.js';
import { sendError } from './responses.js';

/** Where `vite build --config daemon/dashboard/vite.config.ts` writes the dashboard. */
const DASHBOARD_DIST_DIR = join(PACKAGE_ROOT, 'dist', 'dashboard');

/**
 * The dashboard holds the admin key, so it gets a strict policy: only its own scripts and styles,
 * calls to its own origin, overlay previews framed from its own origin, and it may not be framed.
 */
const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Like the control API (decisions §3), by the same policy: a loopback peer that named a loopback Host.
 * Requests through the tunnel arrive from loopback too, but with the tunnel's Host, so they are refused.
 */
export function isLocalDashboardClient(req: IncomingMessage): boolean {
  return isLocalControlClient(req, classifyHost(req.headers.host));
}

/** The URL the daemon prints at start-up; the key rides in the fragment, which browsers never send. */
export function dashboardSignInUrl(baseUrl: string, adminKey: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/dashboard#key=${encodeURIComponent(adminKey.trim())}`;
}

const notFound = (res: ServerResponse, message: string) => sendError(res, 'not_found', message);

interface DashboardOptions {
  /** Defaults to dist/dashboard of the package. */
  distDir?: string;
  /** Defaults to `isLocalDashboardClient`. */
  isLocal?: (req: IncomingMessage) => boolean;
  log?: (line: string) => void;
  /** --dev: Vite's dev server answers instead of the build (hot reload; no CSP, which Vite's client needs). */
  devMiddleware?: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
}

/** Mounts `GET /dashboard` (the page) and `/dashboard/*` (its hashed bundles) onto the daemon's app. */
export function mountDashboard(app: Polka, options: DashboardOptions = {}): void {
  const distDir = options.distDir ?? DASHBOARD_DIST_DIR;
  const isLocal = options.isLocal ?? isLocalDashboardClient;
  const dev = options.devMiddleware;
  const built = existsSync(join(distDir, 'index.html'));
  if (!built && !dev)
    options.log?.(`[http] ${distDir} is missing: run "npm run build" to serve the dashboard`);

  const serve = built
    ? sirv(distDir, {
        etag: true,
        dotfiles: false,
        setHeaders: (res, pathname) => {
          // Bundles are named by content hash; the page itself must always be fresh.
          res.setHeader(
            'Cache-Control',
            pathname.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
          );
        },
      })
    : undefined;

  app.use('/dashboard', (req, res, next) => {
    // Same answer as the control API gives a non-local client: nothing is here.
    if (!isLocal(req)) return notFound(res, 'No such route');
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (dev) {
      // polka strips the mount path; Vite's base is /dashboard/, so give it the full URL back.
      req.url = req.originalUrl;
      return dev(req, res, () => notFound(res, 'No such dashboard file'));
    }
    if (!serve) return notFound(res, 'The dashboard is not built: run "npm run build"');
    res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    serve(req, res, () => notFound(res, 'No such dashboard file'));
  });
}
