import { errorMessage } from '../errors.js';
import { DEFAULT_GATEKEEPER_URL, GatekeeperClient, gatekeeperUrl } from '../licence/gatekeeper-client.js';
import { LoginError, login, logout } from '../licence/login.js';
import { dataDirPaths, defaultDataDir } from '../store/data-dir.js';
import {
  checkTunnelAllowed,
  publicOverlayUrls,
  requireCloudflared,
  TunnelCommandError,
  tunnelDown,
  tunnelStatusLines,
  tunnelUp,
} from '../tunnel/commands.js';
import { licenceWords, runningDaemonLicence, verifyStoredLicence } from './login-outcome.js';
import { openBrowser } from './open-browser.js';

export const REMOTE_COMMANDS = ['login', 'logout', 'tunnel'] as const;
export type RemoteCommand = (typeof REMOTE_COMMANDS)[number];

/** The options these commands read; the CLI's parser provides them. */
interface RemoteCliValues {
  port?: string | undefined;
  host?: string | undefined;
  'data-dir'?: string | undefined;
  gatekeeper?: string | undefined;
  cloudflared?: string | undefined;
  help?: boolean | undefined;
}

interface RemoteCliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Opens the sign-in page (a browser by default). */
  openUrl?: (url: string) => Promise<boolean>;
}

const COMMON = `  --data-dir DIR       the data directory (default ~/.overlay-daemon, or $OVERLAY_DATA_DIR)
  --gatekeeper URL     the Gatekeeper (default ${DEFAULT_GATEKEEPER_URL}, or $OVERLAY_GATEKEEPER_URL)
  -h, --help           show this help
`;

export const LOGIN_HELP = `Usage: overlay-daemon login [options]

Signs you in through your membership platform in the browser and stores your licence in
<data-dir>/license.json (readable only by you). The browser comes back to a one-time
address on 127.0.0.1; if no browser opens, the address to visit is printed.

Options:
${COMMON}`;

export const LOGOUT_HELP = `Usage: overlay-daemon logout [--data-dir DIR]

Removes the stored licence; the daemon continues on the free tier.
`;

export const TUNNEL_HELP = `Usage: overlay-daemon tunnel up | down | status [options]

  up       create your tunnel (or reuse it) and connect it: your overlays become reachable at
           https://<your subdomain>/overlay/<id>. If no overlay daemon is running, one starts
           in the foreground with the tunnel; a running one picks the tunnel up by itself.
  down     delete the tunnel and release its subdomain (the connector stops)
  status   ask the Gatekeeper whether the tunnel is connected

Needs a Premium licence ("overlay-daemon login") and cloudflared
(https://developers.cloudflare.com/cloudflare-one/connections/connect-networks/downloads/).

Options:
  --cloudflared PATH   the cloudflared executable (default: cloudflared on PATH)
  --port N, --host A   where the overlay daemon listens (default 7890, 127.0.0.1)
${COMMON}`;

export async function runRemoteCommand(
  command: RemoteCommand,
  subcommand: string | undefined,
  values: RemoteCliValues,
  io: RemoteCliIo,
  /** Runs the overlay daemon in the foreground with these same options (for `tunnel up`). */
  startInForeground: () => Promise<number>,
): Promise<number> {
  if (values.help) {
    io.out(command === 'login' ? LOGIN_HELP : command === 'logout' ? LOGOUT_HELP : TUNNEL_HELP);
    return 0;
  }
  const dataDir = values['data-dir'] ?? defaultDataDir();
  let client: GatekeeperClient;
  try {
    client = new GatekeeperClient(gatekeeperUrl(values.gatekeeper));
  } catch (err) {
    io.err(`overlay-daemon: ${errorMessage(err)}\n`);
    return 2;
  }
  try {
    if (command === 'login') {
      if (subcommand !== undefined) return usage(io, `unexpected argument "${subcommand}"`);
      const record = await login({
        client,
        licenceFile: dataDirPaths(dataDir).licenseFile,
        openUrl: io.openUrl ?? openBrowser,
        log: (line) => io.out(`${line}\n`),
      });
      io.out(`Signed in (user ${record.user_id}). Licence stored in ${dataDir}.\n`);
      // Not the Gatekeeper's word for it: the tier the licence gives once verified as the daemon verifies it.
      const { status, why } = await verifyStoredLicence(dataDir, client);
      io.out(
        status.state === 'invalid'
          ? `The licence does not verify on this computer${why ? ` (${why})` : ''}: the overlay daemon stays on the free tier.\n`
          : `The overlay daemon now has: ${licenceWords(status)}.\n`,
      );
      const running = await runningDaemonLicence(values, status);
      if (running)
        io.out(`The running overlay daemon (${running.baseUrl}) says: ${licenceWords(running.licence)}.\n`);
      return status.state === 'invalid' ? 1 : 0;
    }
    if (command === 'logout') {
      if (subcommand !== undefined) return usage(io, `unexpected argument "${subcommand}"`);
      const outcome = await logout(dataDirPaths(dataDir).licenseFile, client);
      if (!outcome.removed) io.out('Not signed in.\n');
      else if (outcome.revoked) io.out('Signed out: the licence is revoked everywhere and was removed.\n');
      else
        io.out(
          `Signed out on this machine: the licence was removed. The Gatekeeper could not revoke it (${outcome.reason}); copies elsewhere stay valid until they expire.\n`,
        );
      return 0;
    }
    const ctx = { client, dataDir };
    if (subcommand === 'up') {
      // The licence first: a free streamer need not install cloudflared to learn that.
      await checkTunnelAllowed(ctx);
      await requireCloudflared(values.cloudflared ?? 'cloudflared');
      const record = await tunnelUp(ctx);
      io.out(`Tunnel ready: ${record.public_url}\n`);
      for (const line of await publicOverlayUrls(dataDir, record.public_url)) io.out(`${line}\n`);
      if (await daemonAnswers(values)) {
        io.out('The running overlay daemon connects the tunnel within a few seconds.\n');
        return 0;
      }
      io.out('Starting the overlay daemon with the tunnel (Ctrl+C stops both).\n');
      return await startInForeground();
    }
    if (subcommand === 'down') {
      const outcome = await tunnelDown(ctx);
      io.out(
        outcome === 'deleted' ? 'Tunnel deleted; its subdomain is released.\n' : 'There was no tunnel.\n',
      );
      return 0;
    }
    if (subcommand === 'status') {
      for (const line of await tunnelStatusLines(ctx)) io.out(`${line}\n`);
      return 0;
    }
    return usage(
      io,
      subcommand ? `unknown tunnel command "${subcommand}"` : 'tunnel needs up, down or status',
    );
  } catch (err) {
    if (err instanceof LoginError || err instanceof TunnelCommandError) {
      io.err(`overlay-daemon: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

function usage(io: RemoteCliIo, message: string): number {
  io.err(`overlay-daemon: ${message}. Run "overlay-daemon --help".\n`);
  return 2;
}

async function daemonAnswers(values: RemoteCliValues): Promise<boolean> {
  const host = values.host ?? '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${values.port ?? '7890'}/status`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch {
    return false;
  }
}
