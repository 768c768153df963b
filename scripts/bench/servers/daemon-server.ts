// Bench child: the real overlay daemon (startDaemon, with its default event pipeline) on 127.0.0.1 port 0.
// It runs the compiled daemon (dist/, what `npx overlay-daemon` runs), not the TypeScript sources through
// the tsx loader, whose transform wraps every function expression in a naming helper called per request.
//
// Usage: daemon-server.ts --data-dir DIR [--rules FILE] [--no-journal] [--keep-rules]
//        [--source platform:channel]… [--twitch-irc URL] [--twitch-api URL] [--twitch-auth URL]
//        [--twitch-eventsub URL] [--youtube-api URL] [--kick-pusher URL] [--kick-site URL]
// Sources reach only the addresses given here (anything else points at a closed loopback port).
// The demo rule of a fresh data directory is removed at start (rules.json = []), so an event costs
// what it costs a streamer without rules: broadcast, rules engine with nothing to fire, widget
// state. Benchmarks that measure rules PUT their own list, or (past the free tier's five) give
// them in FILE, put in force straight through the rules store.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { type RunningDaemon, startDaemon } from '../../../dist/daemon/src/daemon.js';
import { DEFAULT_CONFIG } from '../../../dist/shared/config.js';
import { RuleList } from '../../../dist/shared/rules.js';
import { serveCommands } from '../ipc.js';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    rules: { type: 'string' },
    'no-journal': { type: 'boolean' },
    'keep-rules': { type: 'boolean' },
    source: { type: 'string', multiple: true },
    'twitch-irc': { type: 'string' },
    'twitch-api': { type: 'string' },
    'twitch-auth': { type: 'string' },
    'twitch-eventsub': { type: 'string' },
    'youtube-api': { type: 'string' },
    'kick-pusher': { type: 'string' },
    'kick-site': { type: 'string' },
  },
});
const closed = 'http://127.0.0.1:9';
const platformUrls = {
  twitchIrc: values['twitch-irc'] ?? 'ws://127.0.0.1:9',
  twitchEventSub: values['twitch-eventsub'] ?? 'ws://127.0.0.1:9/ws',
  twitchApi: values['twitch-api'] ?? `${closed}/helix`,
  twitchAuth: values['twitch-auth'] ?? closed,
  youtubeApi: values['youtube-api'] ?? `${closed}/youtube/v3`,
  kickPusher: values['kick-pusher'] ?? 'ws://127.0.0.1:9/app/closed',
  kickSite: values['kick-site'] ?? closed,
};
const sources = (values.source ?? []).map((spec) => {
  const [platform, channel] = spec.split(':') as ['tiktok' | 'twitch' | 'youtube' | 'kick', string];
  return { platform, channel, enabled: true };
});
const dataDir = values['data-dir'];
if (!dataDir) throw new Error('--data-dir is required');

const verbose = process.env.BENCH_VERBOSE === '1';
const daemon: RunningDaemon = await startDaemon({
  port: 0,
  host: '127.0.0.1',
  dataDir,
  watchSettleMs: 50,
  ...(values['no-journal'] ? { journalEvents: false } : {}),
  platformUrls,
  sources,
  // Settings give a YouTube source its key; the bench's YouTube is a stand-in that takes any.
  remoteConfig: () => ({ ...DEFAULT_CONFIG, platforms: { youtube: { api_key: 'bench-key' } } }),
  log: (line) => {
    if (verbose) process.stderr.write(`[daemon] ${line}\n`);
  },
});
// Checked by the same schema as PUT /api/rules, which fills in the defaults.
const rules = v.parse(RuleList, values.rules ? JSON.parse(await readFile(values.rules, 'utf8')) : []);
if (!values['keep-rules']) {
  const replaced = await daemon.rules.replace(rules);
  if (!replaced.ok) throw new Error(`could not put the rules in force: ${replaced.message}`);
}

serveCommands(() => daemon.close());
process.send?.({
  type: 'ready',
  port: daemon.port,
  adminKey: daemon.adminKey,
  overlayIds: daemon.overlays.list().map((o) => o.id),
});
