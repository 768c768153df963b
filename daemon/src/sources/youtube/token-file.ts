// youtube.json: the YouTube sign-in that chat sending uses (decisions-3 §12), in the data directory,
// mode 0600, written atomically. Read asynchronously by the sign-in, and synchronously (cached until the
// daemon's file watcher says it changed) by the chat sender, whose `unavailable()` must answer at once.
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import { parseJsonWith, parseWith } from '../../../../shared/protocol/index.js';
import { DaemonError } from '../../errors.js';
import type { FileWatcher } from '../../store/file-watcher.js';
import { readPrivateJson, writePrivateJson } from '../../store/private-json-file.js';

/** The sign-in's file in the data directory. */
export const YOUTUBE_FILE = 'youtube.json';

const nonEmpty = v.pipe(v.string(), v.minLength(1));

/** youtube.json: the tokens, the Google client they were issued to, and the channel they write as. */
export const YouTubeTokens = v.object({
  accessToken: nonEmpty,
  refreshToken: nonEmpty,
  /** When the access token ends (ISO 8601). */
  expiresAt: v.pipe(v.string(), v.isoTimestamp()),
  scopes: v.array(v.string()),
  /** The Google client the tokens were issued to: a renewal must name the same one. */
  clientId: nonEmpty,
  /** The signed-in account's YouTube channel, when it has one: its id and its name in chat. */
  channelId: v.optional(nonEmpty),
  channelTitle: v.optional(nonEmpty),
});
export type YouTubeTokens = v.InferOutput<typeof YouTubeTokens>;

export function youTubeFile(dataDir: string): string {
  return join(dataDir, YOUTUBE_FILE);
}

export class YouTubeTokenFileError extends DaemonError {
  constructor(message: string) {
    super('unreadable', message);
    this.name = 'YouTubeTokenFileError';
  }
}

const CONNECT_AGAIN = 'run "overlay-daemon connect youtube" again';

/** Reads youtube.json: `undefined` when there is none. Throws YouTubeTokenFileError when it does not parse. */
export async function readYouTubeTokens(dataDir: string): Promise<YouTubeTokens | undefined> {
  const read = await readPrivateJson(youTubeFile(dataDir), YouTubeTokens);
  if (!read.ok)
    throw new YouTubeTokenFileError(`the YouTube sign-in cannot be read (${read.error}): ${CONNECT_AGAIN}`);
  return read.record;
}

/** Writes youtube.json atomically, private to the user (0600): it holds credentials. */
export async function writeYouTubeTokens(dataDir: string, tokens: YouTubeTokens): Promise<void> {
  const parsed = parseWith(YouTubeTokens, tokens);
  if (!parsed.ok) throw new YouTubeTokenFileError(`the YouTube sign-in is incomplete: ${parsed.error}`);
  await writePrivateJson(youTubeFile(dataDir), parsed.value);
}

export async function removeYouTubeTokens(dataDir: string): Promise<void> {
  await rm(youTubeFile(dataDir), { force: true });
}

/** What youtube.json holds now, read synchronously: none, the tokens, or why they cannot be read. */
export type YouTubeTokensNow =
  | { state: 'none' }
  | { state: 'ok'; tokens: YouTubeTokens }
  | { state: 'unreadable'; error: string };

/**
 * youtube.json as it is now: read at the first look, and again at the next look after the daemon's file
 * watcher said it changed (`overlay-daemon connect youtube`, a renewal), so every send costs no read.
 */
export class YouTubeTokenFile {
  #stale = true;
  #now: YouTubeTokensNow = { state: 'none' };
  readonly #unwatch: () => void;

  constructor(
    readonly dataDir: string,
    files: Pick<FileWatcher, 'watch'>,
  ) {
    this.#unwatch = files.watch(youTubeFile(dataDir), () => {
      this.#stale = true;
    });
  }

  current(): YouTubeTokensNow {
    if (!this.#stale) return this.#now;
    this.#stale = false;
    const path = youTubeFile(this.dataDir);
    try {
      const parsed = parseJsonWith(YouTubeTokens, readFileSync(path, 'utf8'));
      this.#now = parsed.ok
        ? { state: 'ok', tokens: parsed.value }
        : { state: 'unreadable', error: `${path}: ${parsed.error}` };
    } catch (err) {
      this.#now =
        (err as NodeJS.ErrnoException).code === 'ENOENT'
          ? { state: 'none' }
          : { state: 'unreadable', error: (err as Error).message };
    }
    return this.#now;
  }

  /** Stops following the file. */
  close(): void {
    this.#unwatch();
  }
}
