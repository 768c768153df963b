// `npm run dev:stack`: the Gatekeeper (wrangler dev), fake Patreon and Cloudflare API, stand-ins for Twitch
// (chat, EventSub, Helix, sign-in), the YouTube Data API and Kick (API and OAuth, the site's channel page,
// the Pusher chat socket, a webhook sender with its own key), and the daemon with the stand-in connector and
// a Twitch, a YouTube and a Kick source, all on this machine and offline, so login, tunnel, remote viewing
// and several platforms at once can be tried end to end.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startFakeKickApi } from '../test/support/fakes/kick-api.js';
import { kickSamples, newKickWebhookSender, ulidLike } from '../test/support/fakes/kick-webhook-signer.js';
import { listenLoopback, readBody, sendJson } from '../test/support/fakes/listen.js';
import { startFakePusher } from '../test/support/fakes/pusher.js';
import { startFakeTwitch, twitchEvent } from '../test/support/fakes/twitch.js';
import { startFakeTwitchIrc } from '../test/support/fakes/twitch-irc.js';
import { startFakeYouTube } from '../test/support/fakes/youtube.js';
import { DEMO_USERS, makeEdgeCertificate, startLocalStack } from '../test/support/local-stack.js';
import { spawnInGroup, stopGroup, stopOnSignals } from '../test/support/process-group.js';
import { resetEarlierRun } from './dev-stack-reset.js';

const STATE_DIR = resolve('.wrangler/dev-stack');
const DATA_DIR = join(STATE_DIR, 'daemon-data');
const STANDIN = resolve('test/support/cloudflared-standin');
const DAEMON = resolve('bin/overlay-daemon.js');
const port = (name: string, fallback: number) => Number(process.env[name] || fallback);
const GATEKEEPER_PORT = port('DEV_STACK_GATEKEEPER_PORT', 8787);
// The tunnels' ingress points at localhost:7890 (TUNNEL_ORIGIN_SERVICE), like a real streamer's machine.
const DAEMON_PORT = port('DEV_STACK_DAEMON_PORT', 7890);
const PUBLIC_PORT = port('DEV_STACK_PUBLIC_PORT', 8443);
/** `npm run dev:kick-webhook` posts here; the stack signs a sample webhook and delivers it to the Gatekeeper. */
const KICK_WEBHOOK_PORT = port('DEV_STACK_KICK_WEBHOOK_PORT', 8798);
const DOMAIN = 'overlays.localhost';
/** The Kick channel of the stack: its broadcaster, the ids the site's channel page gives. */
const KICK = { slug: 'streamer', userId: 4_200_001, channelId: 4_200_002, chatroomId: 4_200_003 };
const KICK_CLIENT = { clientId: 'dev-stack-kick-client', clientSecret: 'dev-stack-kick-secret' };

if (!existsSync(join('dist', 'daemon', 'src', 'cli', 'main.js'))) {
  console.error('dev:stack runs the built daemon: run "npm run build" first.');
  process.exit(1);
}
mkdirSync(STATE_DIR, { recursive: true });
const reset = resetEarlierRun(STATE_DIR, DATA_DIR);
if (reset) console.log(reset);

// The edge speaks HTTPS; a throwaway certificate for *.overlays.localhost (needs openssl; else plain HTTP).
let tls: { cert: string; key: string } | undefined;
try {
  tls = makeEdgeCertificate(STATE_DIR, DOMAIN, 30);
} catch {
  console.warn(
    'openssl not found: the public port speaks plain HTTP, so overlays load but their WebSocket is refused',
  );
}

// Kick's side first: the Gatekeeper is told where its API, OAuth and public key are.
const kickWebhooks = await newKickWebhookSender();
const [kick, pusher] = await Promise.all([
  startFakeKickApi({ ...KICK_CLIENT, webhookPublicKey: kickWebhooks.publicKeyPem }),
  startFakePusher(),
]);
// The account the stand-in's authorize page approves as, and the channel page the daemon reads.
kick.addChannel(KICK);

console.log('starting the Gatekeeper under wrangler dev (about 15 s)…');
const stack = await startLocalStack({
  stateDir: STATE_DIR,
  gatekeeperPort: GATEKEEPER_PORT,
  tunnelDomain: DOMAIN,
  vars: {
    KICK_API_URL: kick.url,
    KICK_AUTH_URL: kick.url,
    KICK_CLIENT_ID: KICK_CLIENT.clientId,
    KICK_CLIENT_SECRET: KICK_CLIENT.clientSecret,
  },
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
  if (tick % 2 === 0)
    pusher.chatMessage(KICK.chatroomId, {
      content: `hello from Kick #${tick}`,
      sender: { id: 4_300_000 + (tick % 3), username: `KickFan${tick % 3}` },
    });
}, 4000);
traffic.unref();

// Kick's webhooks: `npm run dev:kick-webhook -- <kind>` posts the kind here; a sample body of that kind for
// the stack's channel is signed with the sender's key and delivered to the Gatekeeper's /kick/webhook.
const broadcaster = { user_id: KICK.userId, username: 'Streamer', channel_slug: KICK.slug };
let kickLines = 0;
const KICK_SAMPLES: Record<string, () => [string, unknown]> = {
  chat: () => [
    'chat.message.sent',
    kickSamples.chat(broadcaster, { messageId: ulidLike(), content: `a webhook chat line #${++kickLines}` }),
  ],
  follow: () => ['channel.followed', kickSamples.follow(broadcaster)],
  sub: () => ['channel.subscription.new', kickSamples.subscriptionNew(broadcaster)],
  renewal: () => ['channel.subscription.renewal', kickSamples.subscriptionRenewal(broadcaster)],
  gifts: () => ['channel.subscription.gifts', kickSamples.subscriptionGifts(broadcaster)],
  kicks: () => ['kicks.gifted', kickSamples.kicksGifted(broadcaster)],
  live: () => ['livestream.status.updated', kickSamples.livestreamStatus(broadcaster, true)],
  offline: () => ['livestream.status.updated', kickSamples.livestreamStatus(broadcaster, false)],
  unmapped: () => ['livestream.metadata.updated', kickSamples.metadataUpdated(broadcaster)],
};
const kickWebhookControl = await listenLoopback(async (req, res) => {
  await readBody(req);
  const kind = decodeURIComponent((req.url ?? '/').slice(1));
  const sample = KICK_SAMPLES[kind];
  if (req.method !== 'POST' || !sample)
    return sendJson(res, 404, {
      error: `POST /<kind>, kind one of: ${Object.keys(KICK_SAMPLES).join(', ')}`,
    });
  const [type, body] = sample();
  const answer = await kickWebhooks.send(`${stack.gatekeeperUrl}/kick/webhook`, type, body);
  sendJson(res, 200, { type, status: answer.status, answer: await answer.text() });
}, KICK_WEBHOOK_PORT);

// In a process group of its own, with the connector it runs: stopping the stack stops them both.
const daemon: ChildProcess = spawnInGroup(
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
    '--kick',
    KICK.slug,
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
      OVERLAY_KICK_PUSHER_URL: pusher.url,
      OVERLAY_KICK_SITE_URL: kick.url,
      ...(tls ? { STANDIN_TLS_CERT: tls.cert, STANDIN_TLS_KEY: tls.key } : {}),
    },
  },
);

const cli = `OVERLAY_GATEKEEPER_URL=${stack.gatekeeperUrl} OVERLAY_DATA_DIR=${DATA_DIR} npx overlay-daemon`;
console.log(`
Local stack (offline; Ctrl+C, a SIGTERM, or the daemon stopping stops everything):
  Gatekeeper        ${stack.gatekeeperUrl}   (wrangler dev, state in ${STATE_DIR})
  fake Patreon      ${stack.patreon.url}   members: ${Object.keys(DEMO_USERS).join(', ')}
  fake Cloudflare   ${stack.cloudflare.url}   (GET /__fake/state shows tunnels and DNS records)
  Twitch stand-ins  chat ${irc.url}, EventSub ${twitch.urls.eventsub}, Helix ${twitch.urls.api}
  YouTube stand-in  ${youtube.url}   (channel ${YOUTUBE_CHANNEL} is live)
  Kick stand-ins    API, OAuth and site ${kick.url}, chat (Pusher) ${pusher.url}
                    webhooks: npm run dev:kick-webhook -- <${Object.keys(KICK_SAMPLES).join('|')}>  (via ${kickWebhookControl.url})
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
  7. Kick chat comes over the Pusher stand-in every few seconds. For Kick's official events (follows,
     subs, Kicks), after step 1 link the channel "${KICK.slug}" (the stand-in's page approves at once):
     ${cli} connect kick
     then send one signed webhook at a time to the Gatekeeper: npm run dev:kick-webhook -- follow
`);
process.stdin.on('data', () => twitch.approve());

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  // The daemon's group first (it takes the connector down), then wrangler's (workerd with it) and the rest.
  await stopGroup(daemon, { graceMs: 5000 });
  clearInterval(traffic);
  await Promise.all([
    stack.close(),
    irc.close(),
    twitch.close(),
    youtube.close(),
    kick.close(),
    pusher.close(),
    kickWebhookControl.close(),
  ]);
  process.exit(0);
}
// Ctrl+C, SIGTERM or SIGHUP, and `npm run`'s shell going away (a SIGTERM to npm is not passed on).
stopOnSignals((why) => {
  console.log(`stopping the stack (${why})…`);
  void stop();
});
daemon.on('exit', (code) => {
  if (!stopping) {
    console.error(`the overlay daemon exited (${code}); stopping the stack`);
    void stop();
  }
});
