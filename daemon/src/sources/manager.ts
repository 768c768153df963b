// The source manager: starts, stops and reports every live source the streamer set up —
// `sources` in settings.json and the command line's `--tiktok`, `--twitch`, `--youtube` — so several
// platforms feed one daemon. A change of settings starts what is new and stops what went away; a source
// that fails only changes its own state, never another's.
import type { SourceEntry, SourcePlatform } from '../../../shared/settings.js';
import { errorMessage } from '../errors.js';
import type { EventSource, SourceContext, SourceReport } from './source.js';

/** Builds the source of one platform and channel (the daemon's real ones; fakes in tests). */
export type SourceFactory = (
  entry: { platform: SourcePlatform; channel: string; chatroomId?: number },
  ctx: SourceContext,
) => EventSource;

interface Entry extends SourceEntry {
  /** `--twitch` and friends: for this run only, never written to settings.json. */
  commandLine: boolean;
}

const keyOf = (entry: { platform: string; channel: string }) => `${entry.platform}:${entry.channel}`;
const extrasOf = (entry: { chatroomId?: number }) => String(entry.chatroomId ?? '');

export class SourceManager {
  #entries: Entry[] = [];
  readonly #running = new Map<string, EventSource>();
  /** What each running source was started with beyond its key (a Kick chatroom id): a change restarts it. */
  readonly #startedWith = new Map<string, string>();
  /** Sources being stopped, by key: one started again for the same channel waits for it. */
  readonly #stopping = new Map<string, Promise<void>>();
  #closed = false;

  constructor(
    private readonly ctx: Omit<SourceContext, 'streamEnded'> & {
      /** Ends the journal's session: called when a stream ends and no other source is live. */
      endSession(): void;
    },
    private readonly factory: SourceFactory,
  ) {}

  /**
   * Puts a list in force: the command line's entries first (always on), then settings.json's. What is
   * new starts, what is gone or turned off stops, what stays keeps running untouched.
   */
  apply(settings: readonly SourceEntry[], commandLine: readonly SourceEntry[] = this.commandLine()): void {
    if (this.#closed) return;
    const entries: Entry[] = [];
    const seen = new Set<string>();
    for (const entry of commandLine) {
      if (seen.has(keyOf(entry))) continue;
      seen.add(keyOf(entry));
      entries.push({ ...entry, enabled: true, commandLine: true });
    }
    for (const entry of settings) {
      if (seen.has(keyOf(entry))) continue;
      seen.add(keyOf(entry));
      entries.push({ ...entry, commandLine: false });
    }
    this.#entries = entries;
    const wanted = new Set(entries.filter((e) => e.enabled).map(keyOf));
    const extras = new Map(entries.map((e) => [keyOf(e), extrasOf(e)]));
    for (const [key, source] of this.#running) {
      if (wanted.has(key) && this.#startedWith.get(key) === extras.get(key)) continue;
      this.#running.delete(key);
      this.#stop(key, source);
    }
    for (const entry of entries) {
      const key = keyOf(entry);
      if (!entry.enabled || this.#running.has(key)) continue;
      this.#start(entry);
    }
  }

  /** The entries that came from the command line. */
  commandLine(): SourceEntry[] {
    return this.#entries
      .filter((e) => e.commandLine)
      .map(({ platform, channel, enabled }) => ({ platform, channel, enabled }));
  }

  /** `sources` in /status: every entry in order, a turned-off one as `off`. */
  report(): SourceReport[] {
    return this.#entries.map((entry) => {
      const source = this.#running.get(keyOf(entry));
      if (source) return source.report();
      return { platform: entry.platform, channel: entry.channel, state: 'off', detail: 'turned off' };
    });
  }

  /** The running source of a platform and channel. */
  get(platform: SourcePlatform, channel: string): EventSource | undefined {
    return this.#running.get(keyOf({ platform, channel }));
  }

  /** Every running source. */
  running(): EventSource[] {
    return [...this.#running.values()];
  }

  /** Stops and starts again every running source of a platform (its sign-in changed). */
  restart(platform: SourcePlatform): void {
    if (this.#closed) return;
    for (const entry of this.#entries) {
      const key = keyOf(entry);
      const source = this.#running.get(key);
      if (entry.platform !== platform || !source) continue;
      this.#running.delete(key);
      this.#stop(key, source);
      this.#start(entry);
    }
  }

  /** Stops every source; resolves once all have stopped. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const [key, source] of this.#running) this.#stop(key, source);
    this.#running.clear();
    await Promise.all(this.#stopping.values());
  }

  #start(entry: Entry): void {
    const key = keyOf(entry);
    let source: EventSource;
    try {
      source = this.factory(entry, {
        ...this.ctx,
        streamEnded: () => this.#streamEnded(source),
      });
    } catch (err) {
      this.ctx.log(`[sources] ${entry.platform} ${entry.channel} could not start: ${errorMessage(err)}`);
      return;
    }
    this.#running.set(key, source);
    this.#startedWith.set(key, extrasOf(entry));
    const begin = () => {
      // Stopped or replaced meanwhile: not started.
      if (this.#running.get(key) !== source) return;
      try {
        source.start();
      } catch (err) {
        this.ctx.log(`[sources] ${entry.platform} ${entry.channel} failed to start: ${errorMessage(err)}`);
      }
    };
    const previous = this.#stopping.get(key);
    if (previous) void previous.then(begin);
    else begin();
  }

  #stop(key: string, source: EventSource): void {
    const done = Promise.resolve()
      .then(() => source.stop())
      .catch((err) => this.ctx.log(`[sources] ${key} did not stop cleanly: ${errorMessage(err)}`))
      .finally(() => {
        if (this.#stopping.get(key) === done) this.#stopping.delete(key);
      });
    this.#stopping.set(key, done);
  }

  /** One platform's stream ended: the session ends with it unless another platform is still live. */
  #streamEnded(source: EventSource): void {
    const othersLive = [...this.#running.values()].some(
      (other) => other !== source && other.report().state === 'connected',
    );
    if (!othersLive) this.ctx.endSession();
  }
}
