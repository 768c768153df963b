// The sources part: every live source (settings.json's and the command line's) through the source
// manager, following the settings, the Twitch sign-in file and the platform credentials at once.
import { join } from 'node:path';
import type { RemoteConfig } from '../../../shared/config.js';
import type { SourceEntry } from '../../../shared/settings.js';
import { errorMessage } from '../errors.js';
import type { StatusParts } from '../http/status-parts.js';
import type { Ingest } from '../ingest/ingest.js';
import type { Journal } from '../journal/journal.js';
import { type ConfigArrival, type CredentialsReport, credentialOrigin } from '../sources/credentials.js';
import { type PlatformOptions, platformSources } from '../sources/factory.js';
import { type SourceFactory, SourceManager } from '../sources/manager.js';
import { type PlatformUrls, platformUrlsFromEnv } from '../sources/platform-urls.js';
import { TikTokEventSource } from '../sources/tiktok/index.js';
import { readTwitchTokens, TWITCH_FILE } from '../sources/twitch/auth.js';
import type { DataDir } from '../store/data-dir.js';
import type { FileWatcher } from '../store/file-watcher.js';
import type { SettingsStore } from '../store/settings-store.js';
import { systemTimers } from '../timers.js';
import { startPart } from './disposal-stack.js';
import { withKickEvents } from './kick-edge.js';

export interface SourcesOptions {
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
}

/** Where the platforms are reached and with which credentials: settings.json's, else the Gatekeeper's. */
export interface PlatformAccess {
  urls: PlatformUrls;
  twitchClientId(): string | undefined;
  youtubeApiKey(): string | undefined;
  /** Until the Gatekeeper's config arrived, a missing credential is "waiting", not "not set". */
  configArrival(): ConfigArrival;
  /** Where each credential comes from, for the Sources view. */
  report(): CredentialsReport;
}

export function platformAccess(options: SourcesOptions, settings: SettingsStore): PlatformAccess {
  const configArrival = options.remoteConfigArrival ?? ((): ConfigArrival => 'arrived');
  return {
    urls: options.platformUrls ?? platformUrlsFromEnv(),
    twitchClientId: () =>
      settings.current().twitch.clientId ?? options.remoteConfig?.()?.platforms?.twitch?.client_id,
    youtubeApiKey: () =>
      settings.current().youtube.apiKey ?? options.remoteConfig?.()?.platforms?.youtube?.api_key,
    configArrival,
    report: () => {
      const arrival = configArrival();
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
    },
  };
}

export interface SourcesPart {
  sources: SourceManager;
  close(): Promise<void>;
}

/** Starts the sources at once: from then on /status shows each of them (`sources`, and `tiktok`). */
export async function startSources(
  options: SourcesOptions,
  ctx: {
    dataDir: DataDir;
    files: FileWatcher;
    settings: SettingsStore;
    journal: Journal;
    ingest: Ingest;
    access: PlatformAccess;
    statusFields: StatusParts;
    /** How Kick's events through the Gatekeeper stand, in words: said in each kick source's detail. */
    kickEvents?: (() => string | undefined) | undefined;
    log: (line: string) => void;
  },
): Promise<SourcesPart> {
  const { dataDir, settings, journal, ingest, access, statusFields, log } = ctx;
  return startPart(log, async (stack) => {
    const sources = new SourceManager(
      {
        emit: (event, options) => {
          // A source's event handler never throws into the platform's library: the failure is one line.
          try {
            ingest(event, options?.at !== undefined ? { at: options.at } : undefined);
          } catch (err) {
            log(
              `[sources] a ${event.platform} ${event.type} event could not be handled: ${errorMessage(err)}`,
            );
          }
        },
        log,
        urls: access.urls,
        timers: systemTimers(),
        dataDir: dataDir.root,
        twitchClientId: access.twitchClientId,
        youtubeApiKey: access.youtubeApiKey,
        configArrival: access.configArrival,
        endSession: () => journal.endSession(),
      },
      options.sourceFactory ?? platformSources(options.platforms),
    );
    stack.push(() => sources.close(), 'the sources');

    // twitch.json written or removed (the dashboard's sign-in, `overlay-daemon connect twitch` in another
    // terminal, `disconnect twitch`): the Twitch sources start again with it.
    // A renewal rewrites the file with the same account: only another account (or none), or a new sign-in
    // of it with other scopes (one that may now send chat), restarts them.
    const twitchFile = join(dataDir.root, TWITCH_FILE);
    const twitchAccount = async () => {
      const tokens = await readTwitchTokens(dataDir.root).catch(() => undefined);
      return tokens ? `${tokens.clientId}:${tokens.userId}:${[...tokens.scopes].sort().join(' ')}` : '';
    };
    let signedInAs = await twitchAccount();
    const onTwitchFile = () => {
      twitchAccount()
        .then((account) => {
          if (account === signedInAs) return;
          signedInAs = account;
          sources.restart('twitch');
        })
        .catch((err: unknown) => log(`[twitch] following the sign-in file failed: ${errorMessage(err)}`));
    };
    stack.push(ctx.files.watch(twitchFile, onTwitchFile), 'the Twitch sign-in watch');

    // Like `tiktok` below: present once a source is set up.
    statusFields.set('sources', () => {
      const events = ctx.kickEvents?.();
      const list = sources.report().map((report) => withKickEvents(report, events));
      return list.length > 0 ? list : undefined;
    });
    sources.apply(settings.current().sources, options.sources ?? []);
    // A new YouTube key or Twitch client id: the sources that use it start again with it.
    let credentialsInForce = {
      youtube: settings.current().youtube.apiKey,
      twitch: settings.current().twitch.clientId,
    };
    const stopFollowingSettings = settings.onChange((next) => {
      sources.apply(next.sources);
      if (next.youtube.apiKey !== credentialsInForce.youtube) sources.restart('youtube');
      if (next.twitch.clientId !== credentialsInForce.twitch) sources.restart('twitch');
      credentialsInForce = { youtube: next.youtube.apiKey, twitch: next.twitch.clientId };
    });
    stack.push(stopFollowingSettings, 'following the settings');
    // `tiktok` in /status: the detailed state of the first TikTok source, while one runs.
    const firstTikTok = () =>
      sources.running().find((s): s is TikTokEventSource => s instanceof TikTokEventSource);
    statusFields.set('tiktok', () => firstTikTok()?.status());
    return { sources };
  });
}
