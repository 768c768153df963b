// The TikFinity event feed: a receive-only WebSocket on 127.0.0.1:<port> that sends every live event in
// TikTok-Live-Connector's shape (frames.ts), for the games and widgets written against TikFinity's feed.
//
// - Loopback only, any Origin: the games that use it are local files and pages, and nothing here is
//   secret beyond what the stream shows anyway.
// - Receive-only: the feed takes no commands, so a client's frame closes its socket with 1008.
// - At most MAX_FEED_SOCKETS_PER_IP sockets from one address: the next is refused (HTTP 429).
// - A client that does not keep up (MAX_FEED_BUFFERED_BYTES queued) is dropped, not waited for.
// - A port in use is said in words (`state: refused` with its detail, and a log line), never thrown.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type WebSocket, WebSocketServer } from 'ws';
import type { StreamEvent, TikfinityFeedStatus } from '../../../shared/protocol/index.js';
import { errorMessage } from '../errors.js';
import { tikfinityFrame } from './frames.js';

export const MAX_FEED_SOCKETS_PER_IP = 10;
/** A client with more than this queued is too slow for a live feed. */
export const MAX_FEED_BUFFERED_BYTES = 1024 * 1024;
/** Clients send nothing; a frame larger than this is closed 1009 before it is read. */
const MAX_CLIENT_FRAME_BYTES = 1024;

export const FEED_HOST = '127.0.0.1';
/** How long a client has to answer the closing handshake before its socket is cut. */
const CLOSE_GRACE_MS = 1000;

function addressOf(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

export class TikfinityFeed {
  readonly #server: WebSocketServer;
  readonly #perIp = new Map<string, number>();
  // Until `open` settles, which is before anyone reads the feed's status.
  #state: TikfinityFeedStatus['state'] = 'refused';
  #detail: string | undefined = 'not listening yet';
  /** Numbers the frames of this run: `msgId` is unique per feed and never repeats within it. */
  readonly #idPrefix = randomBytes(4).toString('hex');
  #sent = 0;

  private constructor(readonly port: number) {
    this.#server = new WebSocketServer({
      host: FEED_HOST,
      port,
      maxPayload: MAX_CLIENT_FRAME_BYTES,
      clientTracking: true,
      perMessageDeflate: false,
      verifyClient: (info, done) => {
        if ((this.#perIp.get(addressOf(info.req)) ?? 0) >= MAX_FEED_SOCKETS_PER_IP)
          done(false, 429, `At most ${MAX_FEED_SOCKETS_PER_IP} sockets from one address`);
        else done(true);
      },
    });
    this.#server.on('connection', (socket, req) => this.#accept(socket, req));
  }

  /** Listens on `port`; resolves once it listens or was refused (see `status()`), never rejects. */
  static async open(port: number, log: (line: string) => void): Promise<TikfinityFeed> {
    const feed = new TikfinityFeed(port);
    await new Promise<void>((resolve) => {
      feed.#server.once('listening', () => {
        feed.#state = 'listening';
        feed.#detail = undefined;
        log(`[tikfinity] the event feed listens on ws://${FEED_HOST}:${port}/`);
        resolve();
      });
      feed.#server.once('error', (err: NodeJS.ErrnoException) => {
        feed.#state = 'refused';
        feed.#detail =
          err.code === 'EADDRINUSE'
            ? `port ${port} is in use by another program (TikFinity itself?): close it, or choose another port for the feed`
            : `cannot listen on port ${port}: ${errorMessage(err)}`;
        log(`[tikfinity] the event feed is off: ${feed.#detail}`);
        resolve();
      });
    });
    // Later errors of the listening server are logged, never thrown into the daemon.
    feed.#server.on('error', (err) => log(`[tikfinity] the event feed failed: ${errorMessage(err)}`));
    return feed;
  }

  #accept(socket: WebSocket, req: IncomingMessage): void {
    const ip = addressOf(req);
    const open = (this.#perIp.get(ip) ?? 0) + 1;
    this.#perIp.set(ip, open);
    socket.once('close', () => {
      const left = (this.#perIp.get(ip) ?? 1) - 1;
      if (left > 0) this.#perIp.set(ip, left);
      else this.#perIp.delete(ip);
    });
    socket.on('error', () => socket.terminate());
    // Two handshakes passing the check at once: the later one goes.
    if (open > MAX_FEED_SOCKETS_PER_IP) {
      socket.close(1008, `At most ${MAX_FEED_SOCKETS_PER_IP} sockets from one address`);
      return;
    }
    socket.on('message', () => socket.close(1008, 'This feed is receive-only'));
  }

  /** Sends one event to every open socket. */
  send(event: StreamEvent): void {
    if (this.#state !== 'listening' || this.#server.clients.size === 0) return;
    this.#sent += 1;
    const text = JSON.stringify(tikfinityFrame(event, `${this.#idPrefix}-${this.#sent}`));
    for (const socket of this.#server.clients) {
      if (socket.readyState !== socket.OPEN) continue;
      if (socket.bufferedAmount > MAX_FEED_BUFFERED_BYTES) {
        socket.terminate();
        continue;
      }
      socket.send(text);
    }
  }

  status(): TikfinityFeedStatus {
    return {
      state: this.#state,
      port: this.port,
      clients: this.#server.clients.size,
      ...(this.#detail ? { detail: this.#detail } : {}),
    };
  }

  /** Closes every socket (1001, going away), cuts those that do not answer in time, and stops listening. */
  async close(): Promise<void> {
    const sockets = [...this.#server.clients];
    await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<void>((resolve) => {
            if (socket.readyState === socket.CLOSED) return resolve();
            const cut = setTimeout(() => socket.terminate(), CLOSE_GRACE_MS);
            socket.once('close', () => {
              clearTimeout(cut);
              resolve();
            });
            socket.close(1001, 'The event feed is turned off');
          }),
      ),
    );
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
