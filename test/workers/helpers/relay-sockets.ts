// Publishers and viewers of the overlay relay inside workerd: Premium members, their licences, and
// WebSocket clients that keep every frame they get and how they were closed.
import { env } from 'cloudflare:workers';
import { signLicence } from '../../../workers/src/licence.js';
import { writeMember } from '../../../workers/src/membership/member-store.js';
import { deriveSubdomain } from '../../../workers/src/tunnels/subdomain.js';
import { gatekeeper, uniqueIp, uniqueUserId } from './gatekeeper.js';

export const ORIGIN = 'http://gatekeeper.test';

/**
 * A member on record with this tier (and epoch), and a licence of theirs; `ttlSeconds` is the licence's
 * lifetime as LICENCE_TTL_SECONDS would set it (7 days by default).
 */
export async function member(
  label: string,
  options: { tier?: 'free' | 'premium'; licenceTier?: 'free' | 'premium'; ttlSeconds?: number } = {},
): Promise<{ userId: string; token: string; subdomain: string; expiresAt: Date }> {
  const userId = uniqueUserId(label);
  const tier = options.tier ?? 'premium';
  await writeMember(env, userId, { tier, checked_at: Date.now(), refresh_token: null, epoch: 1 });
  const { token, expiresAt } = await licenceOf(userId, {
    tier: options.licenceTier ?? tier,
    ...(options.ttlSeconds ? { ttlSeconds: options.ttlSeconds } : {}),
  });
  return { userId, token, expiresAt, subdomain: await deriveSubdomain(env.SUBDOMAIN_SECRET, userId) };
}

/** A licence signed now for a member, as a refresh hands it out (with LICENCE_TTL_SECONDS = `ttlSeconds`). */
export function licenceOf(
  userId: string,
  options: { tier?: 'free' | 'premium'; ttlSeconds?: number } = {},
): Promise<{ token: string; expiresAt: Date }> {
  const issuer = options.ttlSeconds ? { ...env, LICENCE_TTL_SECONDS: String(options.ttlSeconds) } : env;
  return signLicence(issuer, { sub: userId, tier: options.tier ?? 'premium', epoch: 1 });
}

/** What a re-check finds later: the verdict turned Free, or a logout raised the epoch. */
export async function setMember(userId: string, record: { tier: 'free' | 'premium'; epoch: number }) {
  await writeMember(env, userId, { ...record, checked_at: Date.now(), refresh_token: null });
}

export const hubStub = (subdomain: string, overlayId: string) =>
  env.OVERLAY_RELAY.get(env.OVERLAY_RELAY.idFromName(`${subdomain}/${overlayId}`));

interface Closed {
  code: number;
  reason: string;
}

/** A client socket: frames in arrival order, awaited one at a time, and its close. */
export class Socket {
  readonly frames: string[] = [];
  #read = 0;
  #waiters: (() => void)[] = [];
  readonly closed: Promise<Closed>;
  #closedWith: Closed | undefined;

  constructor(readonly ws: WebSocket) {
    ws.accept();
    ws.addEventListener('message', (event) => {
      this.frames.push(typeof event.data === 'string' ? event.data : '<binary>');
      this.#wake();
    });
    this.closed = new Promise((resolve) => {
      ws.addEventListener('close', (event) => {
        this.#closedWith = { code: event.code, reason: event.reason };
        resolve(this.#closedWith);
        this.#wake();
      });
    });
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** The next frame not yet read, parsed. */
  async next<T = Record<string, unknown>>(): Promise<T> {
    while (this.#read >= this.frames.length) {
      if (this.#closedWith) {
        throw new Error(
          `socket closed (${this.#closedWith.code} ${this.#closedWith.reason}) while a frame was awaited`,
        );
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    const frame = this.frames[this.#read++] as string;
    return JSON.parse(frame) as T;
  }

  /** The next `n` frames. */
  async take<T = Record<string, unknown>>(n: number): Promise<T[]> {
    const out: T[] = [];
    for (let i = 0; i < n; i++) out.push(await this.next<T>());
    return out;
  }

  /** Frames not read yet, without waiting. */
  unread(): string[] {
    return this.frames.slice(this.#read);
  }

  send(value: unknown): void {
    this.ws.send(typeof value === 'string' ? value : JSON.stringify(value));
  }

  close(): void {
    try {
      this.ws.close(1000, 'bye');
    } catch {
      // closed already
    }
  }
}

/** Opens a socket on the Worker; the response when it is refused. */
export async function openSocket(
  path: string,
  headers: Record<string, string>,
  ip = uniqueIp(),
): Promise<Socket | Response> {
  const res = await gatekeeper(path, { headers: { Upgrade: 'websocket', ...headers }, ip });
  if (res.status !== 101 || !res.webSocket) return res;
  return new Socket(res.webSocket);
}

export async function mustOpen(path: string, headers: Record<string, string>, ip?: string): Promise<Socket> {
  const opened = await openSocket(path, headers, ip);
  if (opened instanceof Response)
    throw new Error(`${path} answered ${opened.status}: ${await opened.text()}`);
  return opened;
}

/** The daemon's socket for an overlay; reads `hello` and the first `viewers`. */
export async function publisher(token: string, overlayId: string, ip?: string) {
  const socket = await mustOpen(`/relay/publish/${overlayId}`, { Authorization: `Bearer ${token}` }, ip);
  const hello = await socket.next<{ type: 'hello'; lastSeq: number | null; viewerUrl: string }>();
  const viewers = await socket.next<{ type: 'viewers'; count: number }>();
  return { socket, hello, viewers };
}

/** A viewer's socket (Origin of the Gatekeeper), not yet initialised. */
export function viewerSocket(subdomain: string, overlayId: string, ip?: string) {
  return openSocket(`/v/${subdomain}/${overlayId}/ws`, { Origin: ORIGIN }, ip);
}

/** A viewer that sent `init` (with `resumeFrom` when given) and read its `init`. */
export async function viewer(
  subdomain: string,
  overlayId: string,
  options: { resumeFrom?: number; ip?: string } = {},
) {
  const opened = await viewerSocket(subdomain, overlayId, options.ip);
  if (opened instanceof Response)
    throw new Error(`viewer socket answered ${opened.status}: ${await opened.text()}`);
  opened.send({
    action: 'init',
    overlayId,
    ...(options.resumeFrom !== undefined ? { resumeFrom: options.resumeFrom } : {}),
  });
  const init = await opened.next<{ type: 'init'; overlay: { name: string } }>();
  return { socket: opened, init };
}

/** The `init` a page of the overlay would get, named so a test can tell snapshots apart. */
export function snapshot(name: string) {
  return {
    type: 'snapshot',
    init: { type: 'init', overlay: { name, width: 1920, height: 1080 }, widgets: [] },
  };
}

/** A page message as the daemon forwards it: a follow with its `seq`. */
export function event(seq: number) {
  return {
    type: 'message',
    msg: {
      type: 'stream-event',
      seq,
      at: 1_790_000_000_000 + seq,
      event: {
        type: 'follow',
        platform: 'tiktok',
        user: { uniqueId: `u-${seq}`, nickname: `viewer ${seq}` },
        data: {},
      },
    },
  };
}

export const newOverlayId = () => crypto.randomUUID();
