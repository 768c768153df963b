// Composes the daemon: data directory, overlay registry and the HTTP server on one port.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpApp } from './http.js';
import { OverlayRegistry } from './registry.js';
import { type DataDir, initDataDir, loadOverlays } from './store.js';

export interface DaemonOptions {
  port: number;
  host: string;
  dataDir: string;
}

export interface RunningDaemon {
  port: number;
  host: string;
  dataDir: DataDir;
  registry: OverlayRegistry;
  /** Base URL for local clients, e.g. http://127.0.0.1:7890 */
  url: string;
  close(): Promise<void>;
}

export const DEFAULT_PORT = 7890;
export const DEFAULT_HOST = '127.0.0.1';

export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const dataDir = await initDataDir(options.dataDir);
  const { overlays, failures } = await loadOverlays(dataDir);
  for (const failure of failures) {
    if (!failure.ok) console.error(`[store] ignoring ${failure.path}: ${failure.error}`);
  }
  const registry = new OverlayRegistry(overlays);

  let boundPort = 0;
  const server: Server = createServer();
  const app = createHttpApp({ server, registry, port: () => boundPort });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    app.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  boundPort = (server.address() as AddressInfo).port;
  const hostForUrl = options.host.includes(':') ? `[${options.host}]` : options.host;

  return {
    port: boundPort,
    host: options.host,
    dataDir,
    registry,
    url: `http://${hostForUrl === '0.0.0.0' ? '127.0.0.1' : hostForUrl}:${boundPort}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
