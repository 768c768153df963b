import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../../shared/protocol/index.js';
import type { KickFeedEvent } from '../../../shared/protocol/kick.js';
import type { IngestOptions } from '../ingest/ingest.js';
import { KickSource } from '../sources/kick/source.js';
import { DEFAULT_PLATFORM_URLS } from '../sources/platform-urls.js';
import type { EventSource, SourceContext } from '../sources/source.js';
import { systemTimers } from '../timers.js';
import { deliverThroughKickSource } from './kick-edge.js';

const chat = (id: string): KickFeedEvent => ({
  type: 'chat',
  platform: 'kick',
  user: { uniqueId: 'fan', nickname: 'Fan' },
  data: { comment: id, messageId: id },
});

function kickSource(channel: string, emitted: StreamEvent[]): KickSource {
  const ctx: SourceContext = {
    emit: (event) => emitted.push(event),
    log: () => {},
    urls: {
      ...DEFAULT_PLATFORM_URLS,
      kickSite: 'http://127.0.0.1:9',
      kickPusher: 'ws://127.0.0.1:9/app/key',
    },
    timers: systemTimers(),
    dataDir: '/nonexistent',
    twitchClientId: () => undefined,
    youtubeApiKey: () => undefined,
    streamEnded: () => {},
  };
  return new KickSource(channel, ctx);
}

function setup(running: EventSource[]) {
  const ingested: { event: StreamEvent; options?: IngestOptions }[] = [];
  const deliver = deliverThroughKickSource({
    sources: { running: () => running },
    ingest: (event, options) => {
      ingested.push({ event, ...(options ? { options } : {}) });
      return { firedRules: [] };
    },
    journal: { endSession: () => {} },
    channel: () => 'streamer',
  });
  return { deliver, ingested };
}

describe('deliverThroughKickSource', () => {
  it('a kick source that is not running (stopping, or waiting for its previous one to stop) is no way in: the event goes to the ingest, once', () => {
    const emitted: StreamEvent[] = [];
    // Listed among the running sources, but not started.
    const { deliver, ingested } = setup([kickSource('streamer', emitted)]);
    deliver(chat('one'), 1_000);
    deliver(chat('one'));
    expect(emitted).toEqual([]);
    expect(ingested.map((i) => i.event.type === 'chat' && i.event.data.comment)).toEqual(['one']);
    expect(ingested[0]?.options).toEqual({ at: 1_000 });
  });

  it("a running kick source of the linked channel takes the event, with the feed's time", async () => {
    const emitted: StreamEvent[] = [];
    const source = kickSource('Streamer', emitted);
    source.start();
    try {
      const { deliver, ingested } = setup([kickSource('other', []), source]);
      deliver(chat('two'), 2_000);
      expect(emitted.map((e) => e.type === 'chat' && e.data.comment)).toEqual(['two']);
      expect(ingested).toEqual([]);
    } finally {
      await source.stop();
    }
  });
});
