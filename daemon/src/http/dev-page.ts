// --dev: the overlay page and the dashboard straight from their sources through Vite in middleware mode,
// with HMR on the daemon's own port (interface §4.2 rule 1).
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../package-root.js';
import { injectGlobals } from './page.js';

const DEV_BASE = '/overlay-dev/';

export interface DevPage {
  render(overlayId: string, token: string): Promise<string>;
  middleware(req: IncomingMessage, res: ServerResponse, next: () => void): void;
  close(): Promise<void>;
}

export async function startDevPage(server: Server, port: () => number): Promise<DevPage> {
  const pageDir = join(PACKAGE_ROOT, 'daemon', 'page');
  // Imported here only: a production install never loads Vite.
  const { createServer } = await import('vite');
  const vite = await createServer({
    configFile: join(pageDir, 'vite.config.ts'),
    base: DEV_BASE,
    appType: 'custom',
    server: { middlewareMode: true, hmr: { server } },
  });
  const indexPath = join(pageDir, 'index.html');
  return {
    async render(overlayId, token) {
      const source = await readFile(indexPath, 'utf8');
      // The page is served at /overlay/<id>, where ./src/… would resolve wrongly: make its URLs root-relative
      // so that Vite prefixes them with the base (/src/main.ts → /overlay-dev/src/main.ts).
      const rooted = source.replace(/\b(src|href)="\.\//g, '$1="/');
      const html = await vite.transformIndexHtml('/index.html', rooted);
      return injectGlobals(html, { overlayId, port: port(), token });
    },
    middleware: (req, res, next) => vite.middlewares(req, res, next),
    close: () => vite.close(),
  };
}

export interface DevDashboard {
  middleware(req: IncomingMessage, res: ServerResponse, next: () => void): void;
  close(): Promise<void>;
}

/** The dashboard from daemon/dashboard with hot reload, under the same /dashboard/ base as its build. */
export async function startDevDashboard(server: Server): Promise<DevDashboard> {
  const { createServer } = await import('vite');
  // Its HMR socket is told apart from the page's by its path (the base), so both share the port.
  const vite = await createServer({
    configFile: join(PACKAGE_ROOT, 'daemon', 'dashboard', 'vite.config.ts'),
    appType: 'spa',
    server: { middlewareMode: true, hmr: { server } },
  });
  return {
    middleware: (req, res, next) => vite.middlewares(req, res, next),
    close: () => vite.close(),
  };
}
