// The TikFinity feed part: follows settings.json's `tikfinityFeed` live (turned on, off, or moved to
// another port, the feed starts or stops at once) and offers the pipeline its step (send) and /status
// its state.
import type { StreamEvent, TikfinityFeedStatus } from '../../../shared/protocol/index.js';
import type { TikfinityFeedSettings } from '../../../shared/settings.js';
import type { EventHandler } from '../ingest/ingest.js';
import type { SettingsStore } from '../store/settings-store.js';
import { TikfinityFeed } from '../tikfinity/feed.js';

export interface TikfinityFeedPart {
  /**
   * The pipeline's step: a live event and a test event go out (streamers try their games with test
   * events); a caught-up one does not, since games react to what happens now.
   */
  step: EventHandler;
  /** The feed's state while it is enabled, else undefined (left out of /status). */
  status(): TikfinityFeedStatus | undefined;
  close(): Promise<void>;
}

export async function startTikfinityFeed(ctx: {
  settings: SettingsStore;
  log: (line: string) => void;
}): Promise<TikfinityFeedPart> {
  const { settings, log } = ctx;
  let feed: TikfinityFeed | undefined;
  let wanted: TikfinityFeedSettings = settings.current().tikfinityFeed;
  let closed = false;
  // One change at a time, in order: the old socket is closed before the new one listens on the same port.
  let applying: Promise<void> = Promise.resolve();
  const apply = (next: TikfinityFeedSettings): Promise<void> => {
    applying = applying.then(async () => {
      const want = closed ? undefined : next.enabled ? next.port : undefined;
      if (feed && feed.port === want && feed.status().state === 'listening') return;
      if (feed) {
        const old = feed;
        feed = undefined;
        await old.close();
        log(`[tikfinity] the event feed on port ${old.port} is closed`);
      }
      if (want !== undefined) feed = await TikfinityFeed.open(want, log);
    });
    return applying;
  };
  await apply(wanted);
  const stopFollowing = settings.onChange((next) => {
    const { enabled, port } = next.tikfinityFeed;
    if (enabled === wanted.enabled && port === wanted.port) return;
    wanted = next.tikfinityFeed;
    void apply(wanted);
  });
  return {
    step: (event: StreamEvent, _ctx, mark) => {
      if (!mark.caughtUp) feed?.send(event);
    },
    status: () => feed?.status(),
    async close() {
      stopFollowing();
      closed = true;
      await apply(wanted);
    },
  };
}
