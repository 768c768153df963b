// WebSocket subscribers and the event poster used by the fan-out, memory and growth benchmarks (one clock: this process).
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';

/** A server under test as the clients see it: the daemon or a baseline speaking the same flow. */
export interface Target {
  port: number;
  /** Sent as `Authorization: Bearer` on control calls (the daemon's admin key). */
  adminKey?: string;
}

/** Clients per source address: the daemon allows 10 open connections per IP (decisions §3). */
const CLIENTS_PER_IP = 10;

/** Source address of client `index`: 127.1.a.b, ten clients each, so the per-IP limit stays on. */
function clientAddress(index: number): string {
  const ip = Math.floor(index / CLIENTS_PER_IP);
  return `127.1.${Math.floor(ip / 250)}.${(ip % 250) + 1}`;
}

/** Page loads (tokens) come from their own address, control calls from 127.0.0.1. */
const PAGE_ADDRESS = '127.0.0.2';
const CONTROL_ADDRESS = '127.0.0.1';

interface HttpResult {
  status: number;
  body: string;
}

/**
 * Keep-alive agents for the bench's own HTTP calls. With a `timeout`, Node's Agent closes an idle socket
 * a second before the server's announced `Keep-Alive: timeout=5` (without one it ignores the hint), so a
 * request never goes out on a socket the server is closing at that moment (read ECONNRESET).
 */
function keepAliveAgent(maxSockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets, timeout: 60_000 });
}

/** One HTTP request with a loopback Host header, over a keep-alive agent. */
function httpRequest(
  target: Target,
  agent: Agent,
  options: { method: string; path: string; body?: string; localAddress: string; auth?: boolean },
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Host: `127.0.0.1:${target.port}` };
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    if (options.auth && target.adminKey) headers.Authorization = `Bearer ${target.adminKey}`;
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port,
        method: options.method,
        path: options.path,
        headers,
        agent,
        localAddress: options.localAddress,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`${options.method} ${options.path} timed out`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Control calls (POST /api/events, commands, rules) from 127.0.0.1 over keep-alive sockets. */
export class ControlClient {
  readonly agent = keepAliveAgent(8);
  constructor(readonly target: Target) {}

  async call(method: string, path: string, body?: unknown): Promise<HttpResult> {
    return httpRequest(this.target, this.agent, {
      method,
      path,
      localAddress: CONTROL_ADDRESS,
      auth: true,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  }

  async expect(method: string, path: string, body: unknown, status: number): Promise<HttpResult> {
    const res = await this.call(method, path, body);
    if (res.status !== status) throw new Error(`${method} ${path} answered ${res.status}: ${res.body}`);
    return res;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** A gift whose `data.seq` lets every receiver say which event it got (data is forwarded as given). */
export function giftBody(seq: number, giftName = 'Rose'): string {
  return `{"type":"gift","user":{"uniqueId":"bench","nickname":"Bench"},"data":{"giftName":"${giftName}","repeatCount":1,"seq":${seq}}}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** A chat message whose text names its seq, as the platform benchmark's chat sends them. */
export const chatSeqText = (seq: number) => `seq ${seq}`;
const CHAT_SEQ = /^seq (\d+)$/;

/** `event.data.seq` of a `stream-event` (or the seq a chat's text names), or undefined for any other message. */
function streamEventSeq(text: string): number | undefined {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(message) || message.type !== 'stream-event' || !isRecord(message.event)) return undefined;
  const data = message.event.data;
  if (!isRecord(data)) return undefined;
  if (typeof data.seq === 'number') return data.seq;
  const named = typeof data.comment === 'string' ? CHAT_SEQ.exec(data.comment) : null;
  return named ? Number(named[1]) : undefined;
}

interface EventTrack {
  sentAt: number;
  received: number;
  done?: () => void;
}

/**
 * Subscribed clients, each through the real flow: page load for a token, WebSocket, `init`, `init`
 * reply. Every `stream-event` they receive is timed against the moment its POST was issued.
 */
export class Subscribers {
  readonly sockets: WebSocket[] = [];
  readonly #events = new Map<number, EventTrack>();
  readonly #pageAgent = keepAliveAgent(4);
  /** Per-delivery latencies (ms) of events marked for recording. */
  latencies: number[] = [];
  recording = false;
  delivered = 0;
  lastReceiveAt = 0;

  constructor(readonly target: Target) {}

  get count(): number {
    return this.sockets.length;
  }

  /** Adds `count` subscribers; overlay of client i is `overlayIds[i % length]`. */
  async add(count: number, overlayIds: readonly string[], concurrency = 32): Promise<void> {
    const start = this.sockets.length;
    let next = start;
    const worker = async () => {
      while (next < start + count) {
        const index = next++;
        const overlayId = overlayIds[index % overlayIds.length] ?? '';
        this.sockets.push(await this.#subscribe(index, overlayId));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  }

  async #subscribe(index: number, overlayId: string): Promise<WebSocket> {
    const page = await httpRequest(this.target, this.#pageAgent, {
      method: 'GET',
      path: `/overlay/${overlayId}`,
      localAddress: PAGE_ADDRESS,
    });
    const token = /window\.__APP_TOKEN__="([^"]+)"/.exec(page.body)?.[1];
    if (page.status !== 200 || !token) throw new Error(`page load answered ${page.status}`);
    const ws = new WebSocket(`ws://127.0.0.1:${this.target.port}`, {
      localAddress: clientAddress(index),
      perMessageDeflate: false,
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`client ${index} got no init reply`)), 10_000);
      ws.once('error', reject);
      ws.once('open', () => ws.send(JSON.stringify({ action: 'init', overlayId, token })));
      ws.once('message', () => {
        clearTimeout(timer);
        ws.off('error', reject);
        ws.on('error', () => {});
        ws.on('message', (data) => this.#onMessage(String(data)));
        resolve();
      });
    });
    return ws;
  }

  #onMessage(text: string): void {
    const at = performance.now();
    const seq = streamEventSeq(text);
    if (seq === undefined) return;
    const track = this.#events.get(seq);
    if (!track) return;
    this.delivered++;
    this.lastReceiveAt = at;
    if (this.recording) this.latencies.push(at - track.sentAt);
    track.received++;
    if (track.received >= this.sockets.length) {
      this.#events.delete(seq);
      track.done?.();
    }
  }

  /** Starts timing event `seq` now; resolves once every subscriber has it (or rejects after `timeoutMs`). */
  expect(seq: number, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#events.delete(seq);
        reject(new Error(`event ${seq} reached only some of ${this.sockets.length} clients`));
      }, timeoutMs);
      this.#events.set(seq, {
        sentAt: performance.now(),
        received: 0,
        done: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  async close(): Promise<void> {
    const closed = this.sockets.map(
      (ws) =>
        new Promise<void>((resolve) => (ws.readyState === ws.CLOSED ? resolve() : ws.once('close', resolve))),
    );
    for (const ws of this.sockets) ws.terminate();
    await Promise.all(closed);
    this.sockets.length = 0;
    this.#pageAgent.destroy();
  }
}
