// Composes the daemon: data directory, overlay and rule stores, WebSocket hub, HTTP routes, on one port.
import { existsSync, type Stats, unwatchFile as unwatchStat, watchFile as watchStat } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { watch as watchFile } from 'chokidar';
import type { RemoteConfig } from '../../shared/config.js';
import type { RuleList } from '../../shared/rules.js';
import type { SourceEntry } from '../../shared/settings.js';
import { ObsConnection } from './actions/obs.js';
import { ActionRunner } from './actions/runner.js';
import { Speech } from './actions/speech.js';
import { restoreBackup } from './backup/backup.js';
import { errorMessage } from './errors.js';
import { createHttpApp, type PageRenderer, requestListener } from './http/app.js';
import { pendingRestoreFile } from './http/backup-routes.js';
import { ConnectionLimiter } from './http/connection-limit.js';
import type { CreationLimits } from './http/control-api.js';
import type { DevDashboard, DevPage } from './http/dev-page.js';
import { createControlGuard, createFrontDoor, createUpgradeListener } from './http/front-door.js';
import { compiledPageRenderer } from './http/page.js';
import { obsStatusInWords, StatusParts } from './http/status-parts.js';
import { createIngest, type EventHandler, type Ingest } from './ingest/ingest.js';
import { createEventPipeline } from './ingest/pipeline.js';
import { Journal } from './journal/journal.js';
import { installLastResort } from './last-resort.js';
import { safeLog } from './log-line.js';
import { type ConfigArrival, type CredentialsReport, credentialOrigin } from './sources/credentials.js';
import { type PlatformOptions, platformSources } from './sources/factory.js';
import { type SourceFactory, SourceManager } from './sources/manager.js';
import { type PlatformUrls, platformUrlsFromEnv } from './sources/platform-urls.js';
import { TikTokEventSource } from './sources/tiktok/index.js';
import { readTwitchTokens, TWITCH_FILE } from './sources/twitch/auth.js';
import { TwitchSignInService } from './sources/twitch/sign-in.js';
import { type DataDir, dataDirPaths, initDataDir, readAdminKey } from './store/data-dir.js';
import type { OverlayRegistry } from './store/overlay-registry.js';
import { OverlayStore } from './store/overlay-store.js';
import { RulesStore } from './store/rules-store.js';
import {
  type DataDirLock,
  lockDataDir,
  removeRunningDaemon,
  writeRunningDaemon,
} from './store/running-daemon.js';
import { SettingsStore } from './store/settings-store.js';
import { systemTimers } from './timers.js';
import { LiveValuesStore } from './widget-state/live-values-store.js';
import { Hub } from './ws/hub.js';
import { PageTokens } from './ws/page-tokens.js';

export interface DaemonOptions {
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
  /** Steps of event handling after the broadcast; default: the rules and widget state (event-pipeline.ts). */
  eventHandlers?: EventHandler[];
  /**
   * false: events are not written to the journal (its routes still answer, from what it holds). Only
   * the benchmark's "journal off" run uses this; a streamer's daemon always keeps its journal.
   */
  journalEvents?: boolean;
  /** Live sources for this run only (`--tiktok`, `--twitch`, `--youtube`), beside settings.json's `sources`. */
  sources?: SourceEntry[];
  /** Where the platforms are reached; default: the OVERLAY_TWITCH_* / OVERLAY_YOUTUBE_API_URL variables, else theirs. */
  platformUrls?: PlatformUrls;
  /** Options of each platform's source (the TikTok sign key, intervals). */
  platforms?: PlatformOptions;
  /** Builds each source: the real platforms by default, fakes in tests. */
  sourceFactory?: SourceFactory;
  /** The Gatekeeper's configuration in force: platform credentials when settings.json has none. */
  remoteConfig?: () => RemoteConfig | undefined;
  /** Whether that configuration arrived yet (`arrived` when not given): until then nothing is "not set". */
  remoteConfigArrival?: () => ConfigArrival;
  log?: (line: string) => void;
}

export interface RunningDaemon {
  port: number;
  host: string;
  dataDir: DataDir;
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
  close(): Promise<void>;
}

export const DEFAULT_PORT = 7890;

export const DEFAULT_HOST = '127.0.0.1';

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

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
  // One daemon per data directory (daemon.lock): an existing folder is taken before the port is
  // probed, so a second start on it says which process holds it rather than that the port is busy.
  const paths = dataDirPaths(options.dataDir);
  let lock = existsSync(paths.root) ? await lockDataDir(paths) : undefined;
  try {
    await checkCanListen(options.port, options.host);
    const dataDir = await initDataDir(options.dataDir);
    lock ??= await lockDataDir(dataDir);
    return await startOn(options, dataDir, lock);
  } catch (err) {
    await lock?.release();
    throw err;
  }
}

async function startOn(options: DaemonOptions, dataDir: DataDir, lock: DataDirLock): Promise<RunningDaemon> {
  // Every line escapes control characters: platform strings cannot forge lines or drive the terminal.
  const log = safeLog(options.log ?? ((line: string) => console.error(line)));
  // A backup imported through the dashboard is put in place now, before anything reads the files.
  const pending = pendingRestoreFile(dataDir);
  if (existsSync(pending)) {
    try {
      const { keptIn, manifest } = await restoreBackup(dataDir, pending);
      log(`[backup] restored the backup of ${manifest.createdAt}; what was there before is in ${keptIn}`);
    } catch (err) {
      log(`[backup] the imported backup was not restored, nothing changed: ${errorMessage(err)}`);
    }
    await rm(pending, { force: true });
  }
  const keys = { current: await readAdminKey(dataDir) };
  // The values widgets keep from events live apart from the layouts and are merged into them.
  const liveValues = new LiveValuesStore({ path: dataDir.liveValuesFile, log });
  await liveValues.load();
  const overlays = new OverlayStore(dataDir, {
    live: liveValues,
    log,
    ...(options.watchSettleMs ? { settleMs: options.watchSettleMs } : {}),
  });
  await overlays.load();
  await liveValues.settle(overlays.list().map((overlay) => overlay.id));
  const rules = new RulesStore(dataDir, {
    log,
    ...(options.watchSettleMs ? { settleMs: options.watchSettleMs } : {}),
  });
  await rules.load();

  const tokens = new PageTokens({
    ...(options.tokenTtlMs !== undefined ? { ttlMs: options.tokenTtlMs } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const limiter = new ConnectionLimiter(options.maxConnectionsPerIp ?? 10);
  const settings = new SettingsStore(dataDir.settingsFile, log, {
    ...(options.watchSettleMs ? { settleMs: options.watchSettleMs } : {}),
  });
  await settings.load();
  // Every accepted event, written before it is answered; its seq numbers every message of the hub.
  const journal = Journal.open({ path: dataDir.eventsFile, log, points: () => settings.current().points });
  const hub = new Hub({
    sequence: { next: () => journal.nextSeq(), peek: () => journal.peekSeq() },
    ...(options.journalEvents === false ? {} : { replayStore: journal }),
    tokens,
    slots: limiter,
    getOverlay: (id) => overlays.get(id),
    ...(options.initTimeoutMs !== undefined ? { initTimeoutMs: options.initTimeoutMs } : {}),
    ...(options.pingIntervalMs !== undefined ? { pingIntervalMs: options.pingIntervalMs } : {}),
    ...(options.maxBufferedBytes !== undefined ? { maxBufferedBytes: options.maxBufferedBytes } : {}),
    log,
  });
  liveValues.attach({ overlays, commands: hub, journal });
  overlays.subscribe((change) => {
    if (change.type === 'changed') hub.broadcastOverlay(change.overlay);
    else {
      tokens.revokeOverlay(change.overlayId);
      hub.closeOverlay(change.overlayId);
    }
  });
  // What fired rules do beyond overlay commands (webhooks, Streamer.bot), with its log and queues.
  // OBS for `obs` actions: connected once the rules have one, following the settings at once.
  const obs = new ObsConnection({ settings: () => settings.current().obs, log });
  const usesObs = (list: RuleList) => list.some((r) => r.actions.some((a) => a.kind === 'obs'));
  if (usesObs(rules.current())) obs.ensure();
  rules.subscribe((list) => {
    if (usesObs(list)) obs.ensure();
  });
  settings.onChange(() => obs.settingsChanged());
  // Speech with the OS's voices; old files are swept every ten minutes. The blocked words are looked
  // for again in the plain text the engine reads (markup and invisible characters hide none).
  const speech = new Speech({ dir: dataDir.ttsDir, blockedWords: () => settings.current().tts.blockedWords });
  const sweep = () =>
    speech
      .sweep()
      .catch((err: unknown) => log(`[speech] removing old speech files failed: ${errorMessage(err)}`));
  void sweep();
  const sweepTimer = setInterval(() => void sweep(), 10 * 60 * 1000).unref();
  const actions = new ActionRunner({
    obs,
    speech,
    tts: () => settings.current().tts,
    sendCommand: (overlayId, command) => hub.sendCommand(overlayId, command),
    streamerbotUrl: () => settings.current().streamerbot.url,
    log,
  });
  const pipeline = options.eventHandlers
    ? undefined
    : createEventPipeline({ hub, overlays, rules, log, journal }, { actions, liveValues });
  const ingest = createIngest(
    { hub, overlays, rules, log, ...(options.journalEvents === false ? {} : { journal }) },
    options.eventHandlers ?? pipeline?.handlers,
  );
  // Retention: events older than the settings say go, at start and every six hours.
  const prune = () => {
    try {
      const removed = journal.prune(settings.current().journal.retentionDays);
      if (removed > 0)
        log(
          `[journal] removed ${removed} events older than ${settings.current().journal.retentionDays} days`,
        );
    } catch (err) {
      log(`[journal] could not remove old events: ${errorMessage(err)}`);
    }
  };
  prune();
  const pruneTimer = setInterval(prune, 6 * 60 * 60 * 1000).unref();

  // Live sources: settings.json's and the command line's, following the settings at once.
  const platformUrls = options.platformUrls ?? platformUrlsFromEnv();
  const credentials = {
    twitchClientId: () =>
      settings.current().twitch.clientId ?? options.remoteConfig?.()?.platforms?.twitch?.client_id,
    youtubeApiKey: () =>
      settings.current().youtube.apiKey ?? options.remoteConfig?.()?.platforms?.youtube?.api_key,
    // Until the Gatekeeper's config arrived, a missing credential is "waiting", not "not set".
    configArrival: options.remoteConfigArrival ?? ((): ConfigArrival => 'arrived'),
  };
  const credentialsReport = (): CredentialsReport => {
    const arrival = credentials.configArrival();
    const platforms = options.remoteConfig?.()?.platforms;
    return {
      twitchClientId: credentialOrigin(
        settings.current().twitch.clientId,
        platforms?.twitch?.client_id,
        arrival,
      ),
      youtubeApiKey: credentialOrigin(
        settings.current().youtube.apiKey,
        platforms?.youtube?.api_key,
        arrival,
      ),
    };
  };
  const sources = new SourceManager(
    {
      emit: (event) => {
        // A source's event handler never throws into the platform's library: the failure is one line.
        try {
          ingest(event);
        } catch (err) {
          log(`[sources] a ${event.platform} ${event.type} event could not be handled: ${errorMessage(err)}`);
        }
      },
      log,
      urls: platformUrls,
      timers: systemTimers(),
      dataDir: dataDir.root,
      ...credentials,
      endSession: () => journal.endSession(),
    },
    options.sourceFactory ?? platformSources(options.platforms),
  );

  const twitchSignIn = new TwitchSignInService({
    authUrl: platformUrls.twitchAuth,
    dataDir: dataDir.root,
    clientId: credentials.twitchClientId,
    configArrival: credentials.configArrival,
    credentials: credentialsReport,
    log,
  });
  // twitch.json written or removed (the dashboard's sign-in, `overlay-daemon connect twitch` in another
  // terminal, `disconnect twitch`): the Twitch sources start again with it. Polled: the file may not exist.
  // A renewal rewrites the file with the same account: only another account (or none) restarts them.
  const twitchFile = join(dataDir.root, TWITCH_FILE);
  const twitchAccount = async () => {
    const tokens = await readTwitchTokens(dataDir.root).catch(() => undefined);
    return tokens ? `${tokens.clientId}:${tokens.userId}` : '';
  };
  let signedInAs = await twitchAccount();
  const onTwitchFile = (now: Stats, before: Stats) => {
    if (now.mtimeMs === before.mtimeMs && now.nlink === before.nlink) return;
    twitchAccount()
      .then((account) => {
        if (account === signedInAs) return;
        signedInAs = account;
        sources.restart('twitch');
      })
      .catch((err: unknown) => log(`[twitch] following the sign-in file failed: ${errorMessage(err)}`));
  };
  watchStat(twitchFile, { interval: 1000, persistent: false }, onTwitchFile);

  let boundPort = 0;
  const statusFields = new StatusParts();
  statusFields.set('obs', () => obsStatusInWords(obs.status()));
  // Like `tiktok` before it: present once a source is set up.
  statusFields.set('sources', () => {
    const list = sources.report();
    return list.length > 0 ? list : undefined;
  });
  const state = { tunnelHost: options.tunnelHost };
  const server = createServer();
  // Idle keep-alive sockets are not counted against the per-IP limit; do not let them linger.
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;

  let devPage: DevPage | undefined;
  let devDashboard: DevDashboard | undefined;
  const page: PageRenderer = options.dev
    ? {
        render: (id, token) =>
          devPage ? devPage.render(id, token) : Promise.reject(new Error('dev server not ready')),
      }
    : compiledPageRenderer(() => boundPort);
  const frontDoorOptions = {
    limiter,
    tunnelHost: () => state.tunnelHost,
    get adminKey() {
      return keys.current;
    },
    hub,
    dev: options.dev === true,
  };
  const frontDoor = createFrontDoor(frontDoorOptions);
  const app = createHttpApp({
    twitchSignIn,
    actions,
    obs,
    speech,
    settings,
    journal,
    dataDir,
    server,
    frontDoor,
    controlGuard: createControlGuard(frontDoorOptions),
    overlays,
    rules,
    hub,
    tokens,
    page,
    ingest,
    mediaDir: dataDir.mediaDir,
    tunnelHost: frontDoorOptions.tunnelHost,
    log,
    limits: options.limits,
    ...(options.dev
      ? {
          devMiddleware: (req, res, next) => (devPage ? devPage.middleware(req, res, next) : next()),
          dashboardDevMiddleware: (req, res, next) =>
            devDashboard ? devDashboard.middleware(req, res, next) : next(),
        }
      : {}),
    status: () => ({ port: boundPort, ...statusFields.read() }),
  });
  server.on('request', requestListener(app, frontDoor));
  server.on('upgrade', createUpgradeListener(frontDoorOptions));
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    socket.end(
      'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nX-Content-Type-Options: nosniff\r\nContent-Length: 0\r\n\r\n',
    );
  });

  try {
    await listen(server, options.port, options.host);
  } catch (err) {
    await hub.close(0);
    throw err;
  }
  boundPort = (server.address() as AddressInfo).port;
  try {
    if (options.dev) {
      const { startDevDashboard, startDevPage } = await import('./http/dev-page.js');
      [devPage, devDashboard] = await Promise.all([
        startDevPage(server, () => boundPort),
        startDevDashboard(server),
      ]);
    }
    await overlays.watch();
    await rules.watch();
    await settings.watch();
  } catch (err) {
    await Promise.allSettled([
      overlays.close(),
      rules.close(),
      settings.close(),
      hub.close(0),
      devPage?.close(),
      devDashboard?.close(),
    ]);
    server.close();
    throw err;
  }

  // `overlay-daemon new-key` writes a new admin.key: take it at once, so old sign-in links stop working.
  const keyWatcher = watchFile(dataDir.adminKeyFile, {
    ignoreInitial: true,
    awaitWriteFinish: { stabilityThreshold: 50 },
  });
  keyWatcher.on('all', () => {
    readAdminKey(dataDir).then(
      (key) => {
        if (key === keys.current) return;
        keys.current = key;
        log('[daemon] the admin key changed: sign-in links with the old one no longer work');
      },
      (err: unknown) => log(`[daemon] keeping the admin key in force: ${errorMessage(err)}`),
    );
  });
  const hostForUrl = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `http://${hostForUrl === '0.0.0.0' || hostForUrl === '[::]' ? '127.0.0.1' : hostForUrl}:${boundPort}`;
  // So `overlay-daemon status`, `event` and `dashboard` find this daemon without --port.
  await writeRunningDaemon(dataDir.daemonFile, url).catch((err: unknown) =>
    log(`[daemon] could not write ${dataDir.daemonFile}: ${errorMessage(err)}`),
  );
  // The sources start once the daemon listens: from then on /status shows each of them.
  sources.apply(settings.current().sources, options.sources ?? []);
  // A new YouTube key or Twitch client id: the sources that use it start again with it.
  let credentialsInForce = {
    youtube: settings.current().youtube.apiKey,
    twitch: settings.current().twitch.clientId,
  };
  settings.onChange((next) => {
    sources.apply(next.sources);
    if (next.youtube.apiKey !== credentialsInForce.youtube) sources.restart('youtube');
    if (next.twitch.clientId !== credentialsInForce.twitch) sources.restart('twitch');
    credentialsInForce = { youtube: next.youtube.apiKey, twitch: next.twitch.clientId };
  });
  // `tiktok` in /status (decisions §3): the detailed state of the first TikTok source, while one runs.
  const firstTikTok = () =>
    sources.running().find((s): s is TikTokEventSource => s instanceof TikTokEventSource);
  statusFields.set('tiktok', () => firstTikTok()?.status());
  // An error no chain caught is logged and the daemon keeps serving, until it closes.
  const removeLastResort = installLastResort(log);
  let closing: Promise<void> | undefined;
  return {
    port: boundPort,
    host: options.host,
    dataDir,
    registry: overlays.registry,
    overlays,
    liveValues,
    rules,
    hub,
    tokens,
    ingest,
    actions,
    settings,
    journal,
    sources,
    statusFields,
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
    url,
    close() {
      // Shutdown: stop accepting, say goodbye (1001) to WebSocket clients, stop watchers, flush writes.
      closing ??= (async () => {
        removeLastResort();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        pipeline?.close();
        // The waiting widget changes go out to the pages before the hub closes, then to disk.
        const liveWritten = liveValues.close();
        actions.close();
        twitchSignIn.close();
        unwatchStat(twitchFile, onTwitchFile);
        await sources.close();
        clearInterval(sweepTimer);
        clearInterval(pruneTimer);
        await obs.close();
        await hub.close();
        await devPage?.close();
        await devDashboard?.close();
        await Promise.all([
          overlays.close(),
          liveWritten,
          rules.close(),
          settings.close(),
          keyWatcher.close(),
          removeRunningDaemon(dataDir.daemonFile),
        ]);
        server.closeAllConnections();
        await stopped;
        journal.close();
        // Last: from now on another daemon may take this data directory.
        await lock.release();
      })();
      return closing;
    },
  };
}
