// Real `ws` clients for daemon suites: optional source address (127.x.y.z), message queue, close awaiting.
import type { Socket } from 'node:net';
import { type ClientOptions, WebSocket } from 'ws';
import { encodeClientMessage, parseServerMessage, type ServerMessage } from '../../shared/protocol/index.js';

export interface CloseInfo {
  code: number;
  reason: string;
}

export interface TestWsClient {
  ws: WebSocket;
  /** The TCP socket under the connection (pause it to play a client that stops reading). */
  socket: Socket;
  /** Resolves with the next server message matching `predicate` (already received ones count). */
  next(predicate?: (message: ServerMessage) => boolean, timeoutMs?: number): Promise<ServerMessage>;
  /** Every message received so far, parsed. */
  received: ServerMessage[];
  /** Resolves when the connection closes. */
  closed: Promise<CloseInfo>;
  sendInit(overlayId: string, token: string): void;
  close(): void;
}

export interface ConnectOptions {
  /** Source address to bind, e.g. 127.0.0.2, so that one test can act as several client IPs. */
  localAddress?: string;
  headers?: Record<string, string>;
  origin?: string;
  /** Passed to ws (e.g. autoPong: false to play a client that never answers pings). */
  clientOptions?: ClientOptions;
}

export class UpgradeRefused extends Error {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string | string[] | undefined>,
  ) {
    super(`upgrade refused with ${status}`);
  }
}

/** Opens a WebSocket; rejects with UpgradeRefused when the server answers the upgrade with an HTTP status. */
export function connectWs(url: string, options: ConnectOptions = {}): Promise<TestWsClient> {
  const ws = new WebSocket(url, {
    ...options.clientOptions,
    ...(options.localAddress ? { localAddress: options.localAddress } : {}),
    ...(options.origin ? { origin: options.origin } : {}),
    headers: options.headers ?? {},
  });
  let socket: Socket | undefined;
  ws.once('upgrade', (res) => {
    socket = res.socket;
  });
  const received: ServerMessage[] = [];
  const waiters: { predicate: (m: ServerMessage) => boolean; resolve: (m: ServerMessage) => void }[] = [];
  let consumed = 0;
  ws.on('message', (data) => {
    const parsed = parseServerMessage(String(data));
    if (!parsed.ok) throw new Error(`server sent a malformed message: ${parsed.error}`);
    received.push(parsed.value);
    for (const waiter of [...waiters]) {
      if (waiter.predicate(parsed.value)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(parsed.value);
      }
    }
  });
  const closed = new Promise<CloseInfo>((resolve) => {
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
  });
  const client: Omit<TestWsClient, 'socket'> = {
    ws,
    received,
    closed,
    next(predicate = () => true, timeoutMs = 3000) {
      for (let i = consumed; i < received.length; i++) {
        const message = received[i];
        if (message && predicate(message)) {
          consumed = i + 1;
          return Promise.resolve(message);
        }
      }
      return new Promise<ServerMessage>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no matching message in time')), timeoutMs);
        waiters.push({
          predicate,
          resolve: (message) => {
            clearTimeout(timer);
            consumed = received.length;
            resolve(message);
          },
        });
      });
    },
    sendInit(overlayId, token) {
      ws.send(encodeClientMessage({ action: 'init', overlayId, token }));
    },
    close() {
      ws.close();
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      if (!socket) return reject(new Error('no socket after upgrade'));
      resolve({ ...client, socket });
    });
    ws.once('unexpected-response', (_req, res) => {
      reject(new UpgradeRefused(res.statusCode ?? 0, res.headers));
      res.resume();
      ws.terminate();
    });
    ws.once('error', reject);
  });
}
