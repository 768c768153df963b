// Composes the daemon from its parts (parts/: stores, journal, server, WebSocket hub, actions, ingest, HTTP,
// sources) on one port, with one disposal stack: shutdown, or a start that fails, undoes them in reverse.
import { existsSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import type { ActionRunner } from './actions/runner.js';
import type { ChatSenders } from './chat/senders.js';
import { errorMessage } from './errors.js';
import type { CreationLimits } from './http/control-api.js';
import type { StatusParts } from './http/status-parts.js';
import type { EventHandler, Ingest } from './ingest/ingest.js';
import type { Journal } from './journal/journal.js';
import { installLastResort } from './last-resort.js';
import { safeLog } from './log-line.js';
import { startActions } from './parts/actions.js';
import { startChat } from './parts/chat.js';
import { DisposalStack } from './parts/disposal-stack.js';
import { openServer, startHttp } from './parts/http.js';
import { startIngest } from './parts/ingest.js';
import { startJournal } from './parts/journal.js';
import {
  deliverThroughKickSource,
  type KickEdgeOptions,
  startKickEdge,
  tellKickSources,
} from './parts/kick-edge.js';
import { type RelayOptions, startRelay } from './parts/relay.js';
import { platformAccess, type SourcesOptions, startSources } from './parts/sources.js';
import { startStores } from './parts/stores.js';
import { startTikfinityFeed } from './parts/tikfinity-feed.js';
import { startWebSocket } from './parts/websocket.js';
import type { SourceManager } from './sources/manager.js';
import { type DataDir, dataDirPaths, initDataDir } from './store/data-dir.js';
import type { FileWatcher } from './store/file-watcher.js';
import type { OverlayRegistry } from './store/overlay-registry.js';
import type { OverlayStore } from './store/overlay-store.js';
import type { RulesStore } from './store/rules-store.js';
import { lockDataDir, removeRunningDaemon, writeRunningDaemon } from './store/running-daemon.js';
import type { SettingsStore } from './store/settings-store.js';
import type { LiveValuesStore } from './widget-state/live-values-store.js';
import type { Hub } from './ws/hub.js';
import type { PageTokens } from './ws/page-tokens.js';

/** The live sources' options (sources, platformUrls, platforms, sourceFactory, remoteConfig…) are SourcesOptions'. */
export interface DaemonOptions extends SourcesOptions {
  port: number;
  host: string;
  dataDir: string;
  /** Serve the page from the Vite dev server with hot reload (interface §4.2 rule 1). */
  dev?: boolean;
  /** Init window of a WebSocket connection (decisions §3: 5000). */
  initTimeoutMs?: number;
  /** The tunnel's public hostname: accepted as Host and Origin, and its requests read CF-Connecting-IP. */
  tunnelHost?: string;
  /** WebSocket heartbeat period (30 s). */
  pingIntervalMs?: number;
  /** Lifetime of an unused page token (5 minutes). */
  tokenTtlMs?: number;
  /** Clock for token expiry. */
  now?: () => number;
  /** Open connections per client IP (10). */
  maxConnectionsPerIp?: number;
  /** A WebSocket client with more queued than this is dropped (4 MiB). */
  maxBufferedBytes?: number;
  /** How long an edited file must be quiet before it is read (ms). */
  watchSettleMs?: number;
  /** Tier limits on creating overlays and rules (the licence manager). */
  limits?: CreationLimits;
  /** Publishing public overlays to the Gatekeeper's relay: the licence and the Gatekeeper's origin. */
  relay?: RelayOptions;
  /** Kick's official events through the Gatekeeper: the licence and the Gatekeeper's origin. */
  kickEvents?: KickEdgeOptions;
  /** Steps of event handling after the broadcast; default: the rules and widget state (event-pipeline.ts). */
  eventHandlers?: EventHandler[];
  /**
   * false: events are not written to the journal (its routes still answer, from what it holds). Only
   * the benchmark's "journal off" run uses this; a streamer's daemon always keeps its journal.
   */
  journalEvents?: boolean;
  log?: (line: string) => void;
}

export interface RunningDaemon {
  port: number;
  host: string;
  dataDir: DataDir;
  /**
   * The one watcher of the data directory's files (overlays, rules, settings, admin.key, twitch.json,
   * youtube.json; license.json and tunnel.json for remote access): a part follows a file through it.
   */
  files: FileWatcher;
  /** The overlays in force (read-only view of `overlays`). */
  registry: OverlayRegistry;
  overlays: OverlayStore;
  /** live-values.json: the values widgets keep from events, merged into the overlays in force. */
  liveValues: LiveValuesStore;
  rules: RulesStore;
  hub: Hub;
  tokens: PageTokens;
  /** The seam for stream events (ingest.ts). */
  ingest: Ingest;
  /** Runs the actions of fired rules; its log and queues are in the control API. */
  actions: ActionRunner;
  /** Each platform's chat sender for `chat` actions: a platform's sign-in registers its own. */
  chatSenders: ChatSenders;
  /** settings.json: OBS, Streamer.bot, speech (GET/PUT /api/settings). */
  settings: SettingsStore;
  /** events.db: every accepted event, sessions, viewer figures. */
  journal: Journal;
  /** Every live source (settings.json's and the command line's): `sources` in /status. */
  sources: SourceManager;
  /** Parts added to GET /status, e.g. `statusFields.set('tiktok', () => source.status())`. */
  statusFields: StatusParts;
  /** The tunnel hostname in force; set it when a tunnel comes up. */
  tunnelHost: string | undefined;
  /** The admin key in force: `overlay-daemon new-key` replaces admin.key, and the daemon follows. */
  readonly adminKey: string;
  /** This start made the admin key, so its sign-in link is new (printed once, at that start). */
  newAdminKey: boolean;
  /** Base URL for local clients, e.g. http://127.0.0.1:7890 */
  url: string;
  /**
   * Puts a part started on top of the daemon (remote access) on its disposal stack: `close()` closes it
   * first, before the daemon's own parts.
   */
  onClose(close: () => void | Promise<void>, what?: string): void;
  close(): Promise<void>;
}

export const DEFAULT_PORT = 7890;

export const DEFAULT_HOST = '127.0.0.1';

/**
 * Fails as listening would (EADDRINUSE, EACCES, EADDRNOTAVAIL) before anything is written, so a start on a
 * busy port leaves no new data directory behind. The real server listens a moment later.
 */
async function checkCanListen(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const probe = createNetServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ port, host, exclusive: true }, () => resolve());
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  // Every line escapes control characters: platform strings cannot forge lines or drive the terminal.
  const log = safeLog(options.log ?? ((line: string) => console.error(line)));
  // One lifecycle: each part pushes its close as it starts; shutdown, or a part that fails to start,
  // closes them all in reverse, so whatever started is undone in the opposite order.
  const stack = new DisposalStack(log);
  try {
    // One daemon per data directory (daemon.lock): an existing folder is taken before the port is
    // probed, so a second start on it says which process holds it rather than that the port is busy.
    const paths = dataDirPaths(options.dataDir);
    let lock = existsSync(paths.root) ? await lockDataDir(paths) : undefined;
    // Last to close: from then on another daemon may take this data directory.
    if (lock) stack.push(() => lock?.release(), 'the data directory lock');
    await checkCanListen(options.port, options.host);
    const dataDir = await initDataDir(options.dataDir);
    if (!lock) {
      lock = await lockDataDir(dataDir);
      stack.push(() => lock?.release(), 'the data directory lock');
    }
    return await startParts(options, dataDir, stack, log);
  } catch (err) {
    await stack.closeAll();
    throw err;
  }
}

/** The parts in the order they start; each one's close is on the stack before the next starts. */
async function startParts(
  options: DaemonOptions,
  dataDir: DataDir,
  stack: DisposalStack,
  log: (line: string) => void,
): Promise<RunningDaemon> {
  const core = await startCore(options, dataDir, stack, log);
  const { stores, journal, server, ws, actionsPart, ingest, kickEdge } = core;
  const { files, keys, overlays, rules, settings } = stores;
  const { hub, tokens } = ws;
  const { obs, speech, actions, chatSenders } = actionsPart;
  const access = platformAccess(options, settings);
  // The relay starts after the server (its /status part lives there); its route asks for it per request.
  let relayPart: ReturnType<typeof startRelay> | undefined;
  const relayControl = {
    takeBack: (overlayId: string) =>
      relayPart?.relay.takeBack(overlayId) ??
      ({ ok: false, code: 'conflict', message: 'The relay is not started yet' } as const),
  };
  const http = await startHttp(options, {
    dataDir,
    keys,
    overlays,
    rules,
    settings,
    journal,
    server,
    hub,
    tokens,
    limiter: ws.limiter,
    obs,
    speech,
    actions,
    ingest,
    access,
    kickEdge: kickEdge.feed,
    relay: relayControl,
    log,
  });
  stack.push(() => http.close(), 'the HTTP server');
  const { statusFields, url } = http;
  statusFields.set('tikfinityFeed', () => core.tikfinityFeed.status());
  // Public overlays, published to the Gatekeeper's relay while the licence is Premium.
  const relay = startRelay(options.relay, { hub, overlays, mediaDir: dataDir.mediaDir, statusFields, log });
  relayPart = relay;
  stack.push(() => relay.close(), 'the relay publishers');
  // So `overlay-daemon status`, `event` and `dashboard` find this daemon without --port.
  await writeRunningDaemon(dataDir.daemonFile, url).catch((err: unknown) =>
    log(`[daemon] could not write ${dataDir.daemonFile}: ${errorMessage(err)}`),
  );
  stack.push(() => removeRunningDaemon(dataDir.daemonFile), dataDir.daemonFile);
  // The sources start once the daemon listens: from then on /status shows each of them.
  const { sources, close: closeSources } = await startSources(options, {
    dataDir,
    files,
    settings,
    journal,
    ingest,
    access,
    statusFields,
    kickEvents: kickEdge.feed ? () => kickEdge.feed?.describe() : undefined,
    log,
  });
  stack.push(closeSources, 'the sources');
  // Each platform's chat sender, for `chat` actions.
  const chat = await startChat(options, {
    chatSenders,
    access,
    dataDir,
    files,
    sources,
    kickEdge: kickEdge.feed,
    log,
  });
  stack.push(() => chat.close(), 'the chat senders');
  kickEdge.start(
    deliverThroughKickSource({ sources, ingest, journal, channel: () => kickEdge.feed?.status().channel }),
    (state) => tellKickSources(sources, state === 'connected' ? kickEdge.feed?.status().channel : undefined),
    () => sources.running().some((s) => s.platform === 'kick'),
  );
  // An error no chain caught is logged and the daemon keeps serving, until it closes.
  stack.push(installLastResort(log), 'the last resort');
  return runningDaemon(options, dataDir, stack, { ...core, http, sources });
}

/**
 * The parts every other one stands on, up to the event pipeline: the stores, the journal, the server
 * (not yet listening), the WebSocket hub, the actions, ingest, and Kick's events feed (not yet started).
 */
async function startCore(
  options: DaemonOptions,
  dataDir: DataDir,
  stack: DisposalStack,
  log: (line: string) => void,
) {
  const stores = await startStores(dataDir, options, log);
  stack.push(() => stores.close(), 'the stores');
  const { overlays, liveValues, rules, settings } = stores;
  const { journal, close: closeJournal } = startJournal(dataDir, settings, log);
  stack.push(closeJournal, 'the journal');
  // Made before the hub and closed after it: the connections the server waits for include the hub's.
  const { server, close: closeServer } = openServer();
  stack.push(closeServer, 'the server');
  const ws = startWebSocket(options, { journal, overlays, log });
  stack.push(() => ws.close(), 'the WebSocket hub');
  const { hub } = ws;
  const actionsPart = startActions({ dataDir, settings, rules, hub, log });
  const { actions, chatEcho, close: closeActions } = actionsPart;
  stack.push(closeActions, 'the actions');
  // The TikFinity event feed (settings.json `tikfinityFeed`): a step of the pipeline, closed after it.
  const tikfinityFeed = await startTikfinityFeed({ settings, log });
  stack.push(() => tikfinityFeed.close(), 'the TikFinity event feed');
  const { ingest, close: closeIngest } = startIngest(options, {
    hub,
    overlays,
    rules,
    journal,
    actions,
    liveValues,
    settings,
    tikfinityFeed: tikfinityFeed.step,
    isEcho: (event) => chatEcho.isEcho(event),
    log,
  });
  stack.push(closeIngest, 'the event pipeline');
  // Kick's events through the Gatekeeper: made here for the control API, started once the sources run.
  const kickEdge = startKickEdge(options.kickEvents, { journal, log });
  stack.push(() => kickEdge.close(), 'the Kick events feed');
  return { stores, journal, server, ws, actionsPart, ingest, kickEdge, tikfinityFeed };
}

/** What `startDaemon` answers: the parts started, and `close()`, which runs the stack. */
function runningDaemon(
  options: DaemonOptions,
  dataDir: DataDir,
  stack: DisposalStack,
  parts: Awaited<ReturnType<typeof startCore>> & {
    http: Awaited<ReturnType<typeof startHttp>>;
    sources: SourceManager;
  },
): RunningDaemon {
  const { stores, journal, ws, actionsPart, ingest, http, sources } = parts;
  const { files, keys, overlays, liveValues, rules, settings } = stores;
  const { state } = http;
  return {
    port: http.port,
    host: options.host,
    dataDir,
    files,
    registry: overlays.registry,
    overlays,
    liveValues,
    rules,
    hub: ws.hub,
    tokens: ws.tokens,
    ingest,
    actions: actionsPart.actions,
    chatSenders: actionsPart.chatSenders,
    settings,
    journal,
    sources,
    statusFields: http.statusFields,
    get tunnelHost() {
      return state.tunnelHost;
    },
    set tunnelHost(value: string | undefined) {
      state.tunnelHost = value;
    },
    get adminKey() {
      return keys.current;
    },
    newAdminKey: dataDir.newAdminKey === true,
    url: http.url,
    // Shutdown is start in reverse: the sources stop (a streak in progress still reaches the pages),
    // the server stops accepting, the pipeline and actions finish, the hub says goodbye (1001), the
    // last connections close, then the journal, the stores and the lock.
    onClose: (close, what) => stack.push(close, what),
    close: () => stack.closeAll(),
  };
}
