// `overlay-daemon connect kick` and `disconnect kick`: links the member's Kick channel at the Gatekeeper
// (which then receives the channel's official events and keeps them for the daemon) and unlinks it. The
// link is the Gatekeeper's, under the licence: a daemon running on the same data directory is told at
// once, so its events feed opens (and its Kick chat actions go out) without waiting for its next look.
import { hostTimers } from '../../../shared/timers.js';
import { readLicence } from '../licence/licence-file.js';
import { KickLink, type KickLinkFailure } from '../sources/kick/kick-link.js';
import { dataDirPaths, readAdminKey } from '../store/data-dir.js';
import { readRunningDaemon } from '../store/running-daemon.js';
import { openBrowser } from './open-browser.js';

/** How long `connect kick` waits for the streamer to allow the link on Kick. */
export const KICK_CONNECT_WAIT_MS = 10 * 60_000;
/** How often it asks the Gatekeeper meanwhile. */
const POLL_MS = 2000;

interface KickConnectIo {
  out(text: string): void;
  err(text: string): void;
}

/**
 * Tells the daemon running on this data directory, if any, that Kick was just linked: asking it how the
 * link stands makes its feed look again now. Best effort: a daemon that is not running looks when it starts.
 */
async function tellRunningDaemon(root: string): Promise<boolean> {
  const dirs = dataDirPaths(root);
  try {
    const running = await readRunningDaemon(dirs.daemonFile);
    if (!running) return false;
    const key = await readAdminKey(dirs);
    const res = await fetch(`${running.url}/api/sources/kick/connect`, {
      headers: { Authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(5000),
    });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

function why(failure: KickLinkFailure): string {
  if (failure.kind === 'http' && failure.status === 401)
    return `the Gatekeeper refused the licence (${failure.message}); run "overlay-daemon login" again`;
  if (failure.kind === 'http' && failure.status === 403) return `the Gatekeeper refused: ${failure.message}`;
  return failure.message;
}

export async function runKickConnect(
  verb: 'connect' | 'disconnect',
  root: string,
  gatekeeper: string,
  io: KickConnectIo,
  options: { waitMs?: number; open?: (url: string) => Promise<boolean> } = {},
): Promise<number> {
  const read = await readLicence(dataDirPaths(root).licenseFile);
  const token = read.ok ? read.record?.token : undefined;
  if (!token) {
    io.err(
      `overlay-daemon: Kick's events come through the Gatekeeper, under your membership: sign in first: run "overlay-daemon login"${read.ok ? '' : ` (${read.error})`}\n`,
    );
    return 1;
  }
  const link = new KickLink(gatekeeper);
  if (verb === 'disconnect') {
    const done = await link.disconnect(token);
    if (!done.ok) {
      io.err(`overlay-daemon: Kick was not disconnected: ${why(done)}\n`);
      return 1;
    }
    io.out("Disconnected Kick: the Gatekeeper no longer receives your channel's events.\n");
    return 0;
  }
  const started = await link.connect(token);
  if (!started.ok) {
    io.err(`overlay-daemon: Kick could not be connected: ${why(started)}\n`);
    return 1;
  }
  const { url } = started.value;
  io.out(`To connect Kick, open this page and allow the link as the channel's owner:\n\n    ${url}\n\n`);
  // A browser only for someone at a terminal (not for a script reading the output).
  if (process.stdout.isTTY) {
    const opened = await (options.open ?? openBrowser)(url);
    if (!opened) io.out('(Could not start a browser; open the address above yourself.)\n');
  }
  const waitMs = options.waitMs ?? KICK_CONNECT_WAIT_MS;
  io.out(`Waiting for Kick (up to ${Math.round(waitMs / 60_000)} minutes; Ctrl+C cancels)…\n`);
  // The process must stay alive while it waits: Node's own timers, not the daemon's unref'd ones.
  const timers = hostTimers({
    now: () => Date.now(),
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (timer: NodeJS.Timeout) => clearTimeout(timer),
  });
  const deadline = timers.now() + waitMs;
  let lastProblem: string | undefined;
  while (timers.now() < deadline) {
    await new Promise<void>((resolve) => timers.setTimeout(resolve, POLL_MS));
    const status = await link.status(token);
    if (!status.ok) {
      const problem = why(status);
      if (problem !== lastProblem) io.err(`overlay-daemon: asking the Gatekeeper failed: ${problem}\n`);
      lastProblem = problem;
      if (status.kind === 'http' && status.status === 401) return 1;
      continue;
    }
    if (status.value.connected) {
      const channel = status.value.channel;
      const told = await tellRunningDaemon(root);
      io.out(
        `Connected Kick${channel ? `: kick.com/${channel}` : ''}. Follows, subscriptions, gifts and chat come in through the Gatekeeper, also those sent while the overlay server was off (for 24 hours).${told ? ' The running overlay server takes them from now on.' : ''}\n`,
      );
      return 0;
    }
  }
  io.err(
    'overlay-daemon: Kick was not connected in time; run "overlay-daemon connect kick" again when you are ready.\n',
  );
  return 1;
}
