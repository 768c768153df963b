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
  /** How the address was found: the data directory's daemon.json, or --port/--host/the default. */
  from: 'daemon.json' | 'options';
  /** The daemon.json that was read (or looked for and absent); undefined when --port/--host was given. */
  daemonFile?: string;
}

/** Where a command looked for the server, in words: for a message when none answers. */
export function describeLookup(located: LocatedDaemon): string {
  if (located.from === 'daemon.json')
    return `found through ${located.daemonFile}; the server it names may have stopped without removing it`;
  if (located.daemonFile === undefined) return 'at the address given with --port/--host';
  return `no running server recorded in ${located.daemonFile}, so it tried the default address; give --data-dir DIR (the server's data directory) or --port N`;
}

export async function locateDaemon(
  values: { port?: string | undefined; host?: string | undefined; 'data-dir'?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Promise<LocatedDaemon> {
  const dataDir = values['data-dir'] ?? defaultDataDir(env);
  let daemonFile: string | undefined;
  if (values.port === undefined && values.host === undefined) {
    daemonFile = dataDirPaths(dataDir).daemonFile;
    const running = await readRunningDaemon(daemonFile);
    if (running) return { baseUrl: running.url, dataDir, from: 'daemon.json', daemonFile };
  }
  const port = portFrom('--port', values.port) ?? portFrom('$OVERLAY_PORT', env.OVERLAY_PORT) ?? DEFAULT_PORT;
  const host = values.host ?? DEFAULT_HOST;
  return {
    baseUrl: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    dataDir,
    from: 'options',
    ...(daemonFile ? { daemonFile } : {}),
  };
}
