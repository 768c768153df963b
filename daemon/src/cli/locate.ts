// Where the daemon this command talks to listens: --port/--host when given, else the daemon.json of the
// data directory (the running daemon wrote it), else $OVERLAY_PORT or 7890 on 127.0.0.1.
import { DEFAULT_HOST, DEFAULT_PORT } from '../daemon.js';
import { dataDirPaths, defaultDataDir } from '../store/data-dir.js';
import { readRunningDaemon } from '../store/running-daemon.js';
import { wholeNumberIn } from './usage-error.js';

/** A port from a flag or $OVERLAY_PORT: a whole number from `min` to 65535 (0 lets the system choose). */
export function portFrom(name: string, value: string | undefined, min = 1): number | undefined {
  return wholeNumberIn(name, value, min, 65535);
}

interface LocatedDaemon {
  baseUrl: string;
  dataDir: string;
}

export async function locateDaemon(
  values: { port?: string | undefined; host?: string | undefined; 'data-dir'?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Promise<LocatedDaemon> {
  const dataDir = values['data-dir'] ?? defaultDataDir(env);
  if (values.port === undefined && values.host === undefined) {
    const running = await readRunningDaemon(dataDirPaths(dataDir).daemonFile);
    if (running) return { baseUrl: running.url, dataDir };
  }
  const port = portFrom('--port', values.port) ?? portFrom('$OVERLAY_PORT', env.OVERLAY_PORT) ?? DEFAULT_PORT;
  const host = values.host ?? DEFAULT_HOST;
  return { baseUrl: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, dataDir };
}
