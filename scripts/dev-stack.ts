// `npm run dev:stack`: the Gatekeeper (wrangler dev), fake Patreon and Cloudflare API, stand-ins for Twitch
// (chat, EventSub, Helix, sign-in) and the YouTube Data API, and the daemon with the stand-in connector and
// a Twitch and a YouTube source, all on this machine and offline, so login, tunnel, remote viewing and
// several platforms at once can be tried end to end.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startFakeTwitch, twitchEvent } from '../test/support/fakes/twitch.js';
import { startFakeTwitchIrc } from '../test/support/fakes/twitch-irc.js';
import { startFakeYouTube } from '../test/support/fakes/youtube.js';
import { DEMO_USERS, makeEdgeCertificate, startLocalStack } from '../test/support/local-stack.js';

const STATE_DIR = resolve('.wrangler/dev-stack');
const DATA_DIR = join(STATE_DIR, 'daemon-data');
const STANDIN = resolve('test/support/cloudflared-standin');
const DAEMON = resolve('bin/overlay-daemon.js');
const port = (name: string, fallback: number) => Number(process.env[name] || fallback);
const GATEKEEPER_PORT = port('DEV_STACK_GATEKEEPER_PORT', 8787);
// The tunnels' ingress points at localhost:7890 (TUNNEL_ORIGIN_SERVICE), like a real streamer's machine.
const DAEMON_PORT = port('DEV_STACK_DAEMON_PORT', 7890);
const PUBLIC_PORT = port('DEV_STACK_PUBLIC_PORT', 8443);
const DOMAIN = 'overlays.localhost';

if (!existsSync(join('dist', 'daemon', 'src', 'cli', 'main.js'))) {
  console.error('dev:stack runs the built daemon: run "npm run build" first.');
  process.exit(1);
}
mkdirSync(STATE_DIR, { recursive: true });

// The edge speaks HTTPS; a throwaway certificate for *.overlays.localhost (needs openssl; else plain HTTP).
let tls: { cert: string; key: string } | undefined;
try {
  tls = makeEdgeCertificate(STATE_DIR, DOMAIN, 30);
} catch {
  console.warn(
    'openssl not found: the public port speaks plain HTTP, so overlays load but their WebSocket is refused',
  );
}

console.log('starting the Gatekeeper under wrangler dev (about 15 s)…');
const stack = await startLocalStack({
  stateDir: STATE_DIR,
  gatekeeperPort: GATEKEEPER_PORT,
  tunnelDomain: DOMAIN,
  log: (line) => {
    if (/error|✘/i.test(line)) console.error(line);
  },
});

// The platforms' stand-ins, and a little traffic on each so the overlays have something to show.
const [irc, twitch, youtube] = await Promise.all([
  startFakeTwitchIrc(),
  startFakeTwitch(),
  startFakeYouTube({ apiKey: 'dev-stack-youtube-key' }),
]);
const YOUTUBE_CHANNEL = 'UCdevstack00000000000001';
youtube.goLive(YOUTUBE_CHANNEL, { concurrentViewers: 42 });
let tick = 0;
const traffic = setInterval(() => {
  tick++;
  irc.privmsg(
    'streamer',
    { login: `viewer${tick % 5}`, displayName: `Viewer ${tick % 5}` },
    `hello from Twitch #${tick}`,
  );
  if (tick % 3 === 0)
    youtube.addMessage({
      type: 'textMessageEvent',
      text: `hello from YouTube #${tick}`,
      author: `Fan ${tick % 4}`,
    });
  if (tick % 10 === 0)
    twitch.notify('channel.cheer', twitchEvent('channel.cheer', twitch.user, { bits: 100 }));
}, 4000);
traffic.unref();

const daemon: ChildProcess = spawn(
  process.execPath,
  [
    DAEMON,
    'start',
    '--port',
    String(DAEMON_PORT),
    '--data-dir',
    DATA_DIR,
    '--gatekeeper',
    stack.gatekeeperUrl,
    '--cloudflared',
    STANDIN,
    '--twitch',
    'streamer',
    '--youtube',
    YOUTUBE_CHANNEL,
  ],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      STANDIN_ORIGIN: `http://127.0.0.1:${DAEMON_PORT}`,
      STANDIN_FAKE_CLOUDFLARE: stack.cloudflare.url,
      STANDIN_PUBLIC_PORT: String(PUBLIC_PORT),
      OVERLAY_TWITCH_IRC_URL: irc.url,
      OVERLAY_TWITCH_EVENTSUB_URL: twitch.urls.eventsub,
      OVERLAY_TWITCH_API_URL: twitch.urls.api,
      OVERLAY_TWITCH_AUTH_URL: twitch.urls.auth,
      OVERLAY_YOUTUBE_API_URL: youtube.url,
      ...(tls ? { STANDIN_TLS_CERT: tls.cert, STANDIN_TLS_KEY: tls.key } : {}),
    },
  },
);

const cli = `OVERLAY_GATEKEEPER_URL=${stack.gatekeeperUrl} OVERLAY_DATA_DIR=${DATA_DIR} npx overlay-daemon`;
console.log(`
Local stack (offline; Ctrl+C stops everything):
  Gatekeeper        ${stack.gatekeeperUrl}   (wrangler dev, state in ${STATE_DIR})
  fake Patreon      ${stack.patreon.url}   members: ${Object.keys(DEMO_USERS).join(', ')}
  fake Cloudflare   ${stack.cloudflare.url}   (GET /__fake/state shows tunnels and DNS records)
  Twitch stand-ins  chat ${irc.url}, EventSub ${twitch.urls.eventsub}, Helix ${twitch.urls.api}
  YouTube stand-in  ${youtube.url}   (channel ${YOUTUBE_CHANNEL} is live)
  overlay daemon    http://127.0.0.1:${DAEMON_PORT}   (data in ${DATA_DIR})
  "public" edge     ${tls ? 'https' : 'http'}://127.0.0.1:${PUBLIC_PORT} once a tunnel is up (the stand-in connector)

Try it, in another terminal:
  1. ${cli} login
     The browser stops at the fake Patreon page: add &login_hint=patron-premium to its address
     (or patron-declined / never-pledged to see the free tier).
  2. ${cli} tunnel up --port ${DAEMON_PORT} --cloudflared ${STANDIN}
  3. ${cli} tunnel status
  4. View an overlay "from the internet" (the URL printed by tunnel up):
     chromium --user-data-dir=$(mktemp -d) --ignore-certificate-errors \\
       --host-resolver-rules="MAP *.${DOMAIN} 127.0.0.1:${PUBLIC_PORT}" https://o-….${DOMAIN}/overlay/<id>
  5. ${cli} tunnel down
  6. Twitch and YouTube chat arrive every few seconds (Dashboard → Sources shows both). To try the
     Twitch sign-in: OVERLAY_TWITCH_AUTH_URL=${twitch.urls.auth} ${cli} connect twitch
     and press Enter in this terminal to approve the code as the streamer would.
`);
process.stdin.on('data', () => twitch.approve());

let stopping = false;
async function stop(signal: NodeJS.Signals): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (daemon.exitCode === null) {
    daemon.kill(signal);
    await new Promise((r) => daemon.once('exit', r));
  }
  clearInterval(traffic);
  await Promise.all([stack.close(), irc.close(), twitch.close(), youtube.close()]);
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
daemon.on('exit', (code) => {
  if (!stopping) {
    console.error(`the overlay daemon exited (${code}); stopping the stack`);
    void stop('SIGTERM');
  }
});
