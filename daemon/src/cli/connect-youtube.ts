// `overlay-daemon connect youtube` and `disconnect youtube`: the YouTube sign-in chat sending uses
// (decisions-3 §12), by Google's device flow in the terminal (a code to enter at google.com/device), kept
// in youtube.json (mode 0600); and its revocation. A running daemon reads the file at its next send.
import type { RemoteConfig } from '../../../shared/config.js';
import { hostTimers } from '../../../shared/timers.js';
import { errorMessage } from '../errors.js';
import { GatekeeperClient } from '../licence/gatekeeper-client.js';
import { readCachedConfig } from '../licence/remote-config-cache.js';
import type { ConfigArrival } from '../sources/credentials.js';
import { PlatformUrlError, type PlatformUrls, platformUrlsFromEnv } from '../sources/platform-urls.js';
import {
  DEFAULT_GOOGLE_AUTH_URL,
  disconnectYouTube,
  type GoogleClient,
  googleClientOf,
  noGoogleClient,
  startYouTubeDeviceFlow,
} from '../sources/youtube/sign-in.js';
import { dataDirPaths } from '../store/data-dir.js';
import type { Timers } from '../timers.js';
import { UsageError } from './usage-error.js';

interface YouTubeConnectIo {
  out(text: string): void;
  err(text: string): void;
}

export interface YouTubeConnectOptions {
  /** Where Google and YouTube are reached (default: the OVERLAY_GOOGLE_AUTH_URL / OVERLAY_YOUTUBE_API_URL variables). */
  urls?: Pick<PlatformUrls, 'youtubeApi' | 'googleAuth'>;
  /** The waits between polls (Node's own timers by default: they keep the process alive while it waits). */
  timers?: Timers;
}

/** The cached Gatekeeper config's Google client, else a fresh config's. */
async function findGoogleClient(
  root: string,
  gatekeeper: string,
): Promise<{ client?: GoogleClient | undefined; arrival: ConfigArrival; config?: RemoteConfig }> {
  const cached = await readCachedConfig(dataDirPaths(root).remoteConfigFile);
  const fromCache = googleClientOf(cached);
  if (fromCache) return { client: fromCache, arrival: 'arrived' };
  const fetched = await new GatekeeperClient(gatekeeper).config().catch(() => undefined);
  // No answer is no verdict: the Gatekeeper cannot be reached, which is not "it names no client".
  if (!fetched?.ok) return { arrival: 'unreachable' };
  return { client: googleClientOf(fetched.value), arrival: 'arrived', config: fetched.value };
}

export async function runYouTubeConnect(
  verb: 'connect' | 'disconnect',
  root: string,
  gatekeeper: string,
  io: YouTubeConnectIo,
  options: YouTubeConnectOptions = {},
): Promise<number> {
  let urls: Pick<PlatformUrls, 'youtubeApi' | 'googleAuth'>;
  try {
    urls = options.urls ?? platformUrlsFromEnv();
  } catch (err) {
    if (err instanceof PlatformUrlError) throw new UsageError(err.message);
    throw err;
  }
  const authUrl = urls.googleAuth ?? DEFAULT_GOOGLE_AUTH_URL;
  if (verb === 'disconnect') {
    const before = await disconnectYouTube({ authUrl, dataDir: root, log: (line) => io.err(`${line}\n`) });
    io.out(
      before
        ? `Disconnected YouTube${before.channelTitle ? ` (${before.channelTitle})` : ''}: the sign-in is revoked and forgotten.\n`
        : 'YouTube was not connected.\n',
    );
    return 0;
  }
  const { client, arrival, config } = await findGoogleClient(root, gatekeeper);
  if (!client) {
    io.err(`overlay-daemon: ${noGoogleClient(arrival, config)}\n`);
    return 1;
  }
  // The daemon's timers do not keep a process alive; waiting for the streamer here must.
  const timers =
    options.timers ??
    hostTimers({
      now: () => Date.now(),
      setTimeout: (callback, ms) => setTimeout(callback, ms),
      clearTimeout: (timer: NodeJS.Timeout) => clearTimeout(timer),
    });
  try {
    const flow = await startYouTubeDeviceFlow({
      authUrl,
      youtubeApi: urls.youtubeApi,
      client,
      dataDir: root,
      timers,
    });
    io.out(
      `To let the overlay server write in your YouTube live chat, open ${flow.verificationUrl} on any device, sign in with the channel's Google account and enter the code:\n\n    ${flow.userCode}\n\n` +
        `(the code works for ${Math.round(flow.expiresInS / 60)} minutes; waiting for you to allow it…)\n`,
    );
    const tokens = await flow.wait();
    io.out(
      tokens.channelTitle
        ? `Connected YouTube as ${tokens.channelTitle}. Chat actions can now write in your live chat.\n`
        : "Connected YouTube, but the Google account has no YouTube channel that YouTube names: chat is sent as the channel of that account, so sign in with the channel's account if sending fails.\n",
    );
    return 0;
  } catch (err) {
    io.err(`overlay-daemon: YouTube sign-in did not complete: ${errorMessage(err)}\n`);
    return 1;
  }
}
