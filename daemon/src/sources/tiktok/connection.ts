// The platform edge: a tiktok-live-connector connection behind the small LiveConnection interface.
import { EventEmitter } from 'node:events';
import type { WebcastGotHttpConfig } from 'tiktok-live-connector';
import { type LiveConnection, LiveSourceError } from './source.js';

/** The library events the source listens to (tiktok-live-connector 2.5 `WebcastEvent`/`ControlEvent` names). */
const FORWARDED = [
  'gift',
  'like',
  'chat',
  'follow',
  'share',
  'subNotify',
  'roomUser',
  'streamEnd',
  'disconnected',
  'error',
] as const;

interface TikTokConnectionOptions {
  /**
   * An API key of the sign server the library connects through (tiktok-live-connector's `signApiKey`):
   * the free tier's daily limits are a known cause of refused connections.
   */
  signApiKey?: string;
  /**
   * Emit the message batch the sign server returns with the connection (the library's
   * `processInitialData`): the room's recent messages, decoded and emitted before connect() resolves.
   */
  recent?: boolean;
}

/** Connections made with these options. */
export function tiktokConnections(
  options: TikTokConnectionOptions = {},
): (username: string, per?: { recent?: boolean }) => LiveConnection {
  return (username, per) =>
    tiktokConnection(username, { ...options, ...(per?.recent ? { recent: true } : {}) });
}

/**
 * Creates a connection for `username`. The library is loaded on first use, so a daemon that is
 * not configured for TikTok never loads it.
 */
export function tiktokConnection(username: string, options: TikTokConnectionOptions = {}): LiveConnection {
  const events = new EventEmitter();
  let connection: import('tiktok-live-connector').TikTokLiveConnection | undefined;
  // The library's emitter typing does not resolve under NodeNext (typed-emitter is CommonJS); at
  // runtime the connection is a Node EventEmitter, which this checks instead of casting.
  let emitter: EventEmitter | undefined;
  // The library's HTTP client (got) retries a failed request after a back-off, and disconnect() does not
  // cancel a connect still under way: without this, such retries outlive stop() and hold the process for seconds.
  const requests = new AbortController();
  return {
    on: (event, listener) => events.on(event, listener),
    removeAllListeners: () => events.removeAllListeners(),
    async connect() {
      const lib = await import('tiktok-live-connector');
      requests.signal.throwIfAborted();
      connection = new lib.TikTokLiveConnection(username, {
        processInitialData: options.recent === true,
        ...(options.signApiKey ? { signApiKey: options.signApiKey } : {}),
        // Its typing asks for a cookie jar too, but the HTTP client always sets its own over what is passed here.
        webClientOptions: { signal: requests.signal } as WebcastGotHttpConfig,
      });
      const source: unknown = connection;
      if (!(source instanceof EventEmitter)) throw new Error('tiktok-live-connector: not an EventEmitter');
      emitter = source;
      for (const name of FORWARDED) {
        emitter.on(name, (payload: unknown) => {
          // EventEmitter throws on an 'error' nobody listens to; the source always listens.
          if (name !== 'error' || events.listenerCount('error') > 0) events.emit(name, payload);
        });
      }
      try {
        await connection.connect();
      } catch (error) {
        if (error instanceof lib.SignatureRateLimitError)
          throw new LiveSourceError('rate-limited', error.message, error.retryAfter || undefined);
        if (error instanceof lib.UserOfflineError) throw new LiveSourceError('offline', error.message);
        throw error;
      }
    },
    async disconnect() {
      requests.abort();
      await connection?.disconnect();
      emitter?.removeAllListeners();
    },
  };
}
