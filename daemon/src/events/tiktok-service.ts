// Runs one TikTok LIVE source on its own, outside the source manager: its events go through ingest,
// its state shows in GET /status (`tiktok`) and the log. The daemon's sources (settings.json and
// `--tiktok`) go through the manager instead, which uses the same TikTokEventSource.
import type { RunningDaemon } from '../daemon.js';
import { TikTokEventSource, type TikTokOptions } from '../sources/tiktok/index.js';
import type { SourceStatus } from '../sources/tiktok/source.js';

interface TikTokServiceOptions extends TikTokOptions {
  /** The streamer's TikTok username, with or without `@`. */
  username: string;
  log?: (line: string) => void;
}

export interface TikTokService {
  status(): SourceStatus;
  /** Disconnects for good (emitting a gift streak still in progress) and leaves `tiktok` in /status as disconnected. */
  stop(): Promise<void>;
}

/** Names that TikTokSource accepts: what `--tiktok` is checked against before anything starts. */
export function isTikTokUsername(name: string): boolean {
  return /^@?[A-Za-z0-9._]{1,64}$/.test(name.trim());
}

/** Starts the source at once; `GET /status` carries `tiktok: {source, username, state, attempts, lastError?, …}`. */
export function startTikTokService(
  daemon: Pick<RunningDaemon, 'ingest' | 'statusFields'> & Partial<Pick<RunningDaemon, 'journal'>>,
  options: TikTokServiceOptions,
): TikTokService {
  const { username, log = (line: string) => console.error(line), ...rest } = options;
  const source = new TikTokEventSource(
    username,
    {
      emit: (event) => {
        daemon.ingest(event);
      },
      log,
      streamEnded: () => daemon.journal?.endSession(),
    },
    rest,
  );
  daemon.statusFields.set('tiktok', () => source.status());
  source.start();
  return { status: () => source.status(), stop: () => source.stop() };
}
