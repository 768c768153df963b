// The `overlay-daemon` command line (decisions §3).
import { parseArgs } from 'node:util';
import { DEFAULT_HOST, DEFAULT_PORT, startDaemon } from './daemon.js';
import { PACKAGE_VERSION } from './package-root.js';
import { defaultDataDir } from './store.js';

const HELP = `overlay-daemon ${PACKAGE_VERSION}: browser-source overlays for live-streamers

Usage:
  overlay-daemon [start] [options]   run the overlay server
  overlay-daemon --help              this text

Options:
  --port N          port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
  --host ADDR       address to bind (default ${DEFAULT_HOST}; anything else is reachable from your network)
  --data-dir DIR    where overlays, rules and media live (default ~/.overlay-daemon, or $OVERLAY_DATA_DIR)
  -h, --help        show this help
`;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export class UsageError extends Error {}

function parsePort(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PORT;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new UsageError(`--port must be 0–65535, got "${value}"`);
  return port;
}

export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    console.error(`overlay-daemon: ${(err as Error).message}\nRun "overlay-daemon --help" for usage.`);
    return 2;
  }
  const { values, positionals } = parsed;
  const command = positionals[0] ?? 'start';
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (command !== 'start') {
    console.error(`overlay-daemon: unknown command "${command}". Run "overlay-daemon --help".`);
    return 2;
  }
  let port: number;
  try {
    port = parsePort(values.port);
  } catch (err) {
    console.error(`overlay-daemon: ${(err as Error).message}`);
    return 2;
  }
  const host = values.host ?? DEFAULT_HOST;
  if (!LOOPBACK.has(host)) {
    console.warn(`warning: binding to ${host} makes the overlay server reachable from other devices.`);
  }
  const dataDir = values['data-dir'] ?? defaultDataDir();
  let daemon: Awaited<ReturnType<typeof startDaemon>>;
  try {
    daemon = await startDaemon({ port, host, dataDir });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') {
      console.error(`overlay-daemon: port ${port} is already in use (is another overlay-daemon running?)`);
      return 1;
    }
    console.error(`overlay-daemon: ${e.message}`);
    return 1;
  }
  console.log(`overlay-daemon ${PACKAGE_VERSION} listening on ${daemon.url}`);
  console.log(`data directory: ${daemon.dataDir.root}`);
  for (const overlay of daemon.registry.list()) {
    console.log(`overlay "${overlay.name}": ${daemon.url}/overlay/${overlay.id}`);
  }
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await daemon.close();
  return 0;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
