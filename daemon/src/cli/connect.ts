// `overlay-daemon connect twitch` and `disconnect twitch`: the device code flow in the
// terminal (a code and a link to open on any device), the tokens kept in twitch.json (mode 0600), and
// their revocation. A running server picks the change up by itself.
import { readFile } from 'node:fs/promises';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { StoredSettings } from '../../../shared/settings.js';
import { hostTimers } from '../../../shared/timers.js';
import { errorMessage } from '../errors.js';
import { GatekeeperClient, gatekeeperUrl } from '../licence/gatekeeper-client.js';
import { readCachedConfig } from '../licence/remote-config-cache.js';
import type { ConfigArrival } from '../sources/credentials.js';
import { PlatformUrlError, platformUrlsFromEnv } from '../sources/platform-urls.js';
import { readTwitchTokens, startDeviceFlow, TwitchAuth } from '../sources/twitch/auth.js';
import { NoTwitchClientId } from '../sources/twitch/sign-in.js';
import { dataDirPaths, defaultDataDir } from '../store/data-dir.js';
import { runKickConnect } from './connect-kick.js';
import { runYouTubeConnect } from './connect-youtube.js';
import { UsageError } from './usage-error.js';

export const CONNECT_HELP = `Usage: overlay-daemon connect twitch [--data-dir DIR] [--gatekeeper URL]
       overlay-daemon disconnect twitch [--data-dir DIR]
       overlay-daemon connect kick [--data-dir DIR] [--gatekeeper URL]
       overlay-daemon disconnect kick [--data-dir DIR] [--gatekeeper URL]
       overlay-daemon connect youtube [--data-dir DIR] [--gatekeeper URL]
       overlay-daemon disconnect youtube [--data-dir DIR]

connect twitch signs in to Twitch for follows, subscriptions, cheers, raids and viewer counts (chat
needs no sign-in): it shows a code and a link; open the link on any device, sign in as the channel's
broadcaster and enter the code. The sign-in is kept in twitch.json in the data directory (private to
you) and renewed by itself. disconnect twitch revokes it at Twitch and deletes the file.

connect kick links your Kick channel at the Gatekeeper (it needs "overlay-daemon login" first): it shows
a page to open on Kick; once you allow it there, Kick's follows, subscriptions, gifts and chat come in
through the Gatekeeper, also those sent while the overlay server was off (kept for 24 hours). disconnect
kick unlinks it.

connect youtube signs in to YouTube so that chat actions can write in your live chat (reading chat needs
no sign-in, only an API key): it shows a code and a link (google.com/device); open the link on any
device, sign in with the channel's Google account and enter the code. The sign-in is kept in
youtube.json in the data directory (private to you). It uses the Google client the Gatekeeper's
configuration names. disconnect youtube revokes it at Google and deletes the file.

The Twitch client id comes from settings.json (twitch.clientId, set in the dashboard's Sources view),
else from the Gatekeeper's configuration.

Options:
  --data-dir DIR     the data directory (default ~/.overlay-daemon, or $OVERLAY_DATA_DIR)
  --gatekeeper URL   where to ask for the client id (default: $OVERLAY_GATEKEEPER_URL, else the public one)
  -h, --help         show this help
`;

interface ConnectIo {
  out(text: string): void;
  err(text: string): void;
}

/** settings.json's client id, else the cached Gatekeeper config's, else a fresh one's. */
async function findClientId(
  root: string,
  gatekeeper: string | undefined,
): Promise<{ clientId?: string | undefined; arrival: ConfigArrival }> {
  const paths = dataDirPaths(root);
  const text = await readFile(paths.settingsFile, 'utf8').catch(() => undefined);
  if (text) {
    const parsed = parseJsonWith(StoredSettings, text);
    if (parsed.ok && parsed.value.twitch.clientId)
      return { clientId: parsed.value.twitch.clientId, arrival: 'arrived' };
  }
  const cached = await readCachedConfig(paths.remoteConfigFile);
  if (cached.platforms?.twitch?.client_id)
    return { clientId: cached.platforms.twitch.client_id, arrival: 'arrived' };
  const fetched = await new GatekeeperClient(gatekeeperUrl(gatekeeper)).config().catch(() => undefined);
  // No answer is no verdict: the Gatekeeper cannot be reached, which is not "it has no client id".
  if (!fetched?.ok) return { arrival: 'unreachable' };
  return { clientId: fetched.value.platforms?.twitch?.client_id, arrival: 'arrived' };
}

export async function runConnectCommand(
  verb: 'connect' | 'disconnect',
  platform: string | undefined,
  values: { 'data-dir'?: string; gatekeeper?: string },
  io: ConnectIo,
): Promise<number> {
  if (platform === 'kick')
    return runKickConnect(verb, values['data-dir'] ?? defaultDataDir(), gatekeeperUrl(values.gatekeeper), io);
  if (platform === 'youtube')
    return runYouTubeConnect(
      verb,
      values['data-dir'] ?? defaultDataDir(),
      gatekeeperUrl(values.gatekeeper),
      io,
    );
  if (platform !== 'twitch')
    throw new UsageError(
      platform === undefined
        ? `${verb} needs a platform: ${verb} twitch, ${verb} kick, or ${verb} youtube`
        : `${verb} works for twitch, kick and youtube only (TikTok needs no sign-in), got "${platform}"`,
    );
  let authUrl: string;
  try {
    authUrl = platformUrlsFromEnv().twitchAuth;
  } catch (err) {
    if (err instanceof PlatformUrlError) throw new UsageError(err.message);
    throw err;
  }
  const root = values['data-dir'] ?? defaultDataDir();
  if (verb === 'disconnect') {
    const before = await readTwitchTokens(root).catch(() => undefined);
    await new TwitchAuth({ authUrl, dataDir: root, log: (line) => io.err(`${line}\n`) }).disconnect();
    io.out(
      before
        ? `Disconnected Twitch (${before.login}): the sign-in is revoked and forgotten.\n`
        : 'Twitch was not connected.\n',
    );
    return 0;
  }
  const { clientId, arrival } = await findClientId(root, values.gatekeeper);
  if (!clientId) {
    io.err(`overlay-daemon: ${new NoTwitchClientId(arrival).message}\n`);
    return 1;
  }
  try {
    // The daemon's timers do not keep a process alive; waiting for the streamer here must.
    const timers = hostTimers({
      now: () => Date.now(),
      setTimeout: (callback, ms) => setTimeout(callback, ms),
      clearTimeout: (timer: NodeJS.Timeout) => clearTimeout(timer),
    });
    const flow = await startDeviceFlow({ authUrl, clientId, dataDir: root, timers });
    io.out(
      `To connect Twitch, open ${flow.verificationUri} on any device and enter the code:\n\n    ${flow.userCode}\n\n` +
        `(the code works for ${Math.round(flow.expiresInS / 60)} minutes; waiting for you to approve…)\n`,
    );
    const tokens = await flow.wait();
    io.out(
      `Connected Twitch as ${tokens.login}. Follows, subscriptions, cheers, raids and viewer counts will come in.\n`,
    );
    return 0;
  } catch (err) {
    io.err(`overlay-daemon: Twitch sign-in did not complete: ${errorMessage(err)}\n`);
    return 1;
  }
}
