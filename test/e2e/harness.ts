// What the end-to-end suites share: the daemon's readiness lines, the real daemon as a child process, the
// remote-access stack (Gatekeeper, stand-in connector, the daemon started by its CLI), a Premium member's sign-in
// through the fake platform without a browser, and the daemon's TCP sockets to a port.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type CliIo, main } from '../../daemon/src/cli/main.js';
import { GatekeeperClient } from '../../daemon/src/licence/gatekeeper-client.js';
import type { LicenceRecord } from '../../daemon/src/licence/licence-file.js';
import { login } from '../../daemon/src/licence/login.js';
import { type CliRun, spawnCli } from '../support/cli.js';
import { freePort, type LocalStack, makeEdgeCertificate, startLocalStack } from '../support/local-stack.js';
import { until } from '../support/wait.js';

// wrangler dev, the connector and Chromium answer more slowly than the in-process daemon: a longer bound.
export const STACK_WAIT_MS = 15_000;

/** Waits for `overlay-daemon start` to listen and be ready (its own lines), and returns its port. */
export async function daemonReady(output: () => string, timeoutMs = STACK_WAIT_MS): Promise<number> {
  const port = Number(
    await until(
      () => /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output())?.[1],
      'the daemon to listen',
      timeoutMs,
    ),
  );
  await until(
    () => (output().includes('press Ctrl+C') ? true : undefined),
    'the daemon to be ready',
    timeoutMs,
  );
  return port;
}

export interface DaemonProcess {
  port: number;
  pid: number;
  /** Everything it printed so far. */
  output(): string;
  /** The control API on loopback, with the admin key. */
  api(path: string, init?: RequestInit): Promise<Response>;
  /** SIGTERM, then SIGKILL after 5 s; resolves when it exited. */
  stop(): Promise<void>;
}

/**
 * `overlay-daemon start` as a user runs it, in its own process (its sockets and CPU are its own), against the
 * Gatekeeper at `gatekeeperUrl`; `extra.args` follow the others (e.g. `--kick SLUG`), `extra.env` is laid over
 * the environment (e.g. a platform's address at a stand-in).
 */
export async function startDaemonProcess(
  dataDir: string,
  gatekeeperUrl: string,
  extra: { args?: string[]; env?: Record<string, string> } = {},
): Promise<DaemonProcess> {
  const run: CliRun = spawnCli(
    ['start', '--port', '0', '--data-dir', dataDir, '--gatekeeper', gatekeeperUrl, ...(extra.args ?? [])],
    extra.env,
  );
  const output = () => run.stdout() + run.stderr();
  const stop = async () => {
    if (run.child.exitCode !== null || run.child.signalCode !== null) return;
    run.child.kill('SIGTERM');
    const killer = setTimeout(() => run.child.kill('SIGKILL'), 5000);
    await run.exited;
    clearTimeout(killer);
  };
  let port: number;
  try {
    port = await daemonReady(output, 30_000);
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}; it printed:\n${output()}`);
  }
  const key = (await readFile(join(dataDir, 'admin.key'), 'utf8')).trim();
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...init.headers },
    });
  return { port, pid: run.child.pid ?? 0, output, api, stop };
}

/** The tunnels' domain of the remote-access stack: *.overlays.test stands for the internet. */
export const TUNNEL_DOMAIN = 'overlays.test';
const STANDIN = resolve('test/support/cloudflared-standin');
/** What the stand-in connector reads from the environment. */
const STANDIN_ENV = [
  'STANDIN_ORIGIN',
  'STANDIN_FAKE_CLOUDFLARE',
  'STANDIN_PUBLIC_PORT',
  'STANDIN_TLS_CERT',
  'STANDIN_TLS_KEY',
];

export interface RemoteStack {
  /** The daemon's data directory. */
  dataDir: string;
  stack: LocalStack;
  /** The stand-in connector's TLS port: the edge's public side. */
  publicPort: number;
  daemonPort: number;
  /** Runs one CLI command to completion, the way a user would in another terminal. */
  cli(...args: string[]): Promise<{ code: number; out: string; err: string }>;
  /** Stops the daemon and the stack, and removes their directories. */
  close(): Promise<void>;
}

/**
 * The whole remote-access path on one machine: the Gatekeeper under `wrangler dev` with the fake Patreon and fake
 * Cloudflare API, the edge's certificate for *.overlays.test, the stand-in connector's public port, and
 * `overlay-daemon start` left running (in this process) like in a terminal, the connector pointed at it.
 */
export async function startRemoteStack(prefix: string): Promise<RemoteStack> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const dataDir = join(dir, 'data');
  let stack: LocalStack | undefined;
  let stopDaemon: () => void = () => {};
  let daemonExit: Promise<number> | undefined;
  const close = async () => {
    stopDaemon();
    await daemonExit;
    await stack?.close();
    for (const name of STANDIN_ENV) delete process.env[name];
    await rm(dir, { recursive: true, force: true });
  };
  try {
    stack = await startLocalStack({ stateDir: join(dir, 'wrangler'), tunnelDomain: TUNNEL_DOMAIN });
    const gatekeeperUrl = stack.gatekeeperUrl;
    const tls = makeEdgeCertificate(dir, TUNNEL_DOMAIN, 1);
    const publicPort = await freePort();
    Object.assign(process.env, {
      STANDIN_FAKE_CLOUDFLARE: stack.cloudflare.url,
      STANDIN_PUBLIC_PORT: String(publicPort),
      STANDIN_TLS_CERT: tls.cert,
      STANDIN_TLS_KEY: tls.key,
    });

    const daemonOut: string[] = [];
    const io: CliIo = {
      out: (t) => daemonOut.push(t),
      err: (t) => daemonOut.push(t),
      stopSignal: () =>
        new Promise((r) => {
          stopDaemon = () => r('SIGTERM');
        }),
    };
    daemonExit = main(
      [
        'start',
        '--port',
        '0',
        '--data-dir',
        dataDir,
        '--gatekeeper',
        gatekeeperUrl,
        '--cloudflared',
        STANDIN,
      ],
      io,
    );
    const daemonPort = await daemonReady(() => daemonOut.join(''));
    // The tunnel's ingress says localhost:7890; this daemon listens elsewhere, so tell the connector.
    process.env.STANDIN_ORIGIN = `http://127.0.0.1:${daemonPort}`;

    const cli = async (...args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(
        [...args, '--data-dir', dataDir, '--gatekeeper', gatekeeperUrl, '--cloudflared', STANDIN],
        {
          out: (t) => out.push(t),
          err: (t) => err.push(t),
          stopSignal: () => new Promise(() => {}),
        },
      );
      return { code, out: out.join(''), err: err.join('') };
    };
    return { dataDir, stack, publicPort, daemonPort, cli, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Signs `member` (a demo member of the fake platform) in, as `overlay-daemon login` does, following the
 * redirects a browser would follow and approving at the platform's page with `login_hint`.
 */
export async function signIn(
  gatekeeperUrl: string,
  platformUrl: string,
  licenceFile: string,
  member = 'patron-premium',
): Promise<LicenceRecord> {
  return login({
    client: new GatekeeperClient(gatekeeperUrl),
    licenceFile,
    log: () => {},
    timeoutMs: STACK_WAIT_MS,
    openUrl: async (start) => {
      let url = start;
      for (let hop = 0; hop < 10; hop++) {
        const next = new URL(url);
        if (next.origin === platformUrl && next.pathname.endsWith('/authorize')) {
          next.searchParams.set('login_hint', member);
        }
        const res = await fetch(next, { redirect: 'manual' });
        const location = res.headers.get('location');
        await res.arrayBuffer();
        if (res.status < 300 || res.status >= 400 || !location) return res.ok;
        url = new URL(location, next).toString();
      }
      return false;
    },
  });
}

/**
 * The established TCP connections that process `pid` holds to 127.0.0.1:`port`: its socket inodes
 * (/proc/<pid>/fd) matched against the kernel's table (/proc/<pid>/net/tcp).
 */
export function tcpConnectionsTo(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // Closed between the listing and the read.
    }
  }
  const remote = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let count = 0;
  for (const line of readFileSync(`/proc/${pid}/net/tcp`, 'utf8').split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
    if (cols[2] === remote && cols[3] === '01' && inodes.has(cols[9] ?? '')) count++;
  }
  return count;
}
