// Where the daemon reaches each platform. The defaults are the platforms' own; an
// environment variable points one at another server (a local fake in tests). Plain http:// and ws://
// are accepted for 127.0.0.0/8 only, so a token never crosses a network in clear.
import { isIP } from 'node:net';
import { DaemonError } from '../errors.js';

export interface PlatformUrls {
  /** Twitch chat, IRC over WebSocket: `ws[s]://host:port`. */
  twitchIrc: string;
  /** Twitch EventSub WebSocket. */
  twitchEventSub: string;
  /** Helix, including `/helix`. */
  twitchApi: string;
  /** An origin: the daemon adds `/oauth2/device`, `/oauth2/token`, `/oauth2/validate`, `/oauth2/revoke`. */
  twitchAuth: string;
  /** The YouTube Data API v3 root, including `/youtube/v3`. */
  youtubeApi: string;
  /** Google's sign-in service, an origin: the daemon adds `/device/code`, `/token`, `/revoke`. */
  googleAuth?: string;
  /** Kick's chat socket, a Pusher application: `ws[s]://host[:port]/app/<app key>` (the daemon adds the query). */
  kickPusher?: string;
  /** Kick's site: the daemon reads a channel's ids from `/api/v2/channels/<slug>` there. */
  kickSite?: string;
}

export const DEFAULT_PLATFORM_URLS: PlatformUrls = {
  twitchIrc: 'wss://irc-ws.chat.twitch.tv:443',
  twitchEventSub: 'wss://eventsub.wss.twitch.tv/ws',
  twitchApi: 'https://api.twitch.tv/helix',
  twitchAuth: 'https://id.twitch.tv',
  youtubeApi: 'https://www.googleapis.com/youtube/v3',
  googleAuth: 'https://oauth2.googleapis.com',
  kickPusher: 'wss://ws-us2.pusher.com/app/32cbd69e4b950bf97679',
  kickSite: 'https://kick.com',
};

const VARIABLES: Record<keyof PlatformUrls, { name: string; secure: string; plain: string }> = {
  twitchIrc: { name: 'OVERLAY_TWITCH_IRC_URL', secure: 'wss:', plain: 'ws:' },
  twitchEventSub: { name: 'OVERLAY_TWITCH_EVENTSUB_URL', secure: 'wss:', plain: 'ws:' },
  twitchApi: { name: 'OVERLAY_TWITCH_API_URL', secure: 'https:', plain: 'http:' },
  twitchAuth: { name: 'OVERLAY_TWITCH_AUTH_URL', secure: 'https:', plain: 'http:' },
  youtubeApi: { name: 'OVERLAY_YOUTUBE_API_URL', secure: 'https:', plain: 'http:' },
  googleAuth: { name: 'OVERLAY_GOOGLE_AUTH_URL', secure: 'https:', plain: 'http:' },
  kickPusher: { name: 'OVERLAY_KICK_PUSHER_URL', secure: 'wss:', plain: 'ws:' },
  kickSite: { name: 'OVERLAY_KICK_SITE_URL', secure: 'https:', plain: 'http:' },
};

export class PlatformUrlError extends DaemonError {
  constructor(message: string) {
    super('invalid_config', message);
  }
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return isIP(host) === 4 && host.startsWith('127.');
}

/** One address checked: its scheme, and a plain scheme only on 127.0.0.0/8. Trailing slashes removed. */
export function checkPlatformUrl(key: keyof PlatformUrls, value: string): string {
  const { name, secure, plain } = VARIABLES[key];
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new PlatformUrlError(`${name} is not a URL: "${value}"`);
  }
  if (url.protocol !== secure && url.protocol !== plain)
    throw new PlatformUrlError(`${name} must be a ${secure}// URL, got "${value}"`);
  if (url.protocol === plain && !isLoopback(url.hostname))
    throw new PlatformUrlError(
      `${name} may use ${plain}// only on 127.0.0.0/8 (anything else must be ${secure}//), got "${value}"`,
    );
  if (url.username || url.password || url.search || url.hash)
    throw new PlatformUrlError(`${name} must not carry credentials, a query or a fragment`);
  return url.href.replace(/\/+$/, '');
}

/** The addresses in force: each variable that is set replaces its default. Throws PlatformUrlError. */
export function platformUrlsFromEnv(env: NodeJS.ProcessEnv = process.env): PlatformUrls {
  const urls = { ...DEFAULT_PLATFORM_URLS };
  for (const key of Object.keys(VARIABLES) as (keyof PlatformUrls)[]) {
    const value = env[VARIABLES[key].name];
    if (value) urls[key] = checkPlatformUrl(key, value);
  }
  return urls;
}
