// Pairing a phone: an offer's one-time code, the phone's request waiting for the streamer's answer, the
// phone's poll that receives the device cookie once, and the limits on wrong codes.
import { randomBytes, randomUUID } from 'node:crypto';
import type {
  DeviceRole,
  PairingOffer,
  PairingState,
  PendingPairing,
} from '../../../shared/protocol/index.js';
import type { Timers } from '../timers.js';
import { constantTimeEqual, type DeviceStore } from './store.js';

export const CODE_LENGTH = 10;
export const OFFER_TTL_MS = 10 * 60_000;
/**
 * Refused codes allowed per IP in a minute, and in an hour against the open offers. The hour's budget
 * belongs to the offers: codes sent while none is open guess at nothing and close nothing, and a new
 * offer by the streamer starts it afresh, so whoever knows the tunnel's host cannot keep pairing shut.
 */
export const IP_FAILURES_PER_MINUTE = 5;
export const DAEMON_FAILURES_PER_HOUR = 30;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** How long an answered pairing is kept for the phone's poll. */
const ANSWER_TTL_MS = OFFER_TTL_MS;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** 10 characters of RFC 4648 base32, uniformly random (256 is a multiple of 32). */
export function newPairingCode(): string {
  return [...randomBytes(CODE_LENGTH)].map((b) => BASE32[b & 31]).join('');
}

/** The device cookie: only over HTTPS, never to scripts, never on another site's requests. */
export const DEVICE_COOKIE = '__Host-overlay_device';
export const deviceCookie = (token: string): string =>
  `${DEVICE_COOKIE}=${token}; Secure; HttpOnly; SameSite=Strict; Path=/`;

interface Offer {
  code: string;
  role: DeviceRole;
  expiresAt: number;
}

interface Pairing {
  pairingId: string;
  deviceName: string;
  ip: string;
  role: DeviceRole;
  at: number;
  /** Until then the streamer may answer; afterwards the phone hears "expired". */
  expiresAt: number;
  state: 'waiting' | 'refused' | 'approved';
  /** The token for the cookie, held only until the first poll after approval. */
  token?: string | undefined;
  /** The device this browser was paired as before (its cookie came along): revoked on approval. */
  replaces?: string | undefined;
}

export type PairResult =
  | { ok: true; pairingId: string }
  | { ok: false; code: 'forbidden' | 'rate_limited'; message: string; retryAfterSeconds?: number };

export class PairingService {
  private offers: Offer[] = [];
  private readonly pairings = new Map<string, Pairing>();
  /** Pairings whose device is being written: answered once, by whoever came first. */
  private readonly approving = new Set<string>();
  private readonly ipFailures = new Map<string, number[]>();
  private daemonWindow: { start: number; count: number } | undefined;

  constructor(
    private readonly devices: DeviceStore,
    private readonly timers: Pick<Timers, 'now'>,
    /** The tunnel's public hostname, for the offer's URL. */
    private readonly tunnelHost: () => string | undefined,
  ) {}

  /** A new offer; undefined when there is no tunnel to pair through. */
  offer(role: DeviceRole = 'moderator'): PairingOffer | undefined {
    const host = this.tunnelHost();
    if (!host) return undefined;
    this.sweep();
    this.daemonWindow = undefined;
    const code = newPairingCode();
    const expiresAt = this.timers.now() + OFFER_TTL_MS;
    this.offers.push({ code, role, expiresAt });
    return { code, url: `https://${host}/pair#${code}`, role, expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * The phone's `POST /pair`: a waiting pairing, or a refusal that counts against the limits. `replaces`:
   * the device the same browser is paired as already (its cookie came along), revoked on approval, so
   * pairing a phone again leaves one device, not two.
   */
  request(code: string, deviceName: string, ip: string, replaces?: string): PairResult {
    const now = this.timers.now();
    this.sweep();
    const window = this.daemonWindow;
    if (window && window.count >= DAEMON_FAILURES_PER_HOUR) {
      return {
        ok: false,
        code: 'rate_limited',
        message:
          'Too many wrong pairing codes: pairing is closed for the rest of the hour, or until the streamer makes a new pairing code',
        retryAfterSeconds: Math.ceil((window.start + HOUR - now) / 1000),
      };
    }
    const recent = (this.ipFailures.get(ip) ?? []).filter((t) => t > now - MINUTE);
    if (recent.length >= IP_FAILURES_PER_MINUTE) {
      return {
        ok: false,
        code: 'rate_limited',
        message: 'Too many wrong pairing codes from this address: wait a minute',
        retryAfterSeconds: Math.ceil(((recent[0] ?? now) + MINUTE - now) / 1000),
      };
    }
    const offer = this.match(code.trim().toUpperCase());
    if (!offer) {
      this.ipFailures.set(ip, [...recent, now]);
      if (this.offers.length > 0) {
        const count = (window?.count ?? 0) + 1;
        this.daemonWindow = { start: window?.start ?? now, count };
        // The budget is spent: the offers it guarded are withdrawn, and the streamer makes a new one.
        if (count >= DAEMON_FAILURES_PER_HOUR) this.offers = [];
      }
      return { ok: false, code: 'forbidden', message: 'This pairing code is wrong, used or expired' };
    }
    // Single use: the offer is spent now, whatever the streamer answers.
    this.offers = this.offers.filter((o) => o !== offer);
    const pairingId = randomUUID();
    this.pairings.set(pairingId, {
      pairingId,
      deviceName,
      ip,
      role: offer.role,
      at: now,
      expiresAt: offer.expiresAt,
      state: 'waiting',
      replaces,
    });
    return { ok: true, pairingId };
  }

  /** Every live offer is compared, each in constant time, so the time taken says nothing of the code. */
  private match(code: string): Offer | undefined {
    let found: Offer | undefined;
    for (const offer of this.offers) if (constantTimeEqual(offer.code, code)) found = offer;
    return found;
  }

  /** Pairings waiting for the streamer's answer. */
  pending(): PendingPairing[] {
    this.sweep();
    return [...this.pairings.values()]
      .filter((p) => p.state === 'waiting' && p.expiresAt > this.timers.now())
      .map((p) => ({
        pairingId: p.pairingId,
        deviceName: p.deviceName,
        ip: p.ip,
        role: p.role,
        at: new Date(p.at).toISOString(),
      }));
  }

  private waiting(pairingId: string): Pairing | undefined {
    const pairing = this.pairings.get(pairingId);
    return pairing?.state === 'waiting' && pairing.expiresAt > this.timers.now() ? pairing : undefined;
  }

  /**
   * Approves a waiting pairing: the device exists from now on (and the one it replaces is revoked); false
   * when none waits with that id. The device is written first and the answer and its token set together
   * after, so a poll while devices.json is written still hears "waiting", never "approved" without the cookie.
   */
  async approve(pairingId: string, role?: DeviceRole): Promise<boolean> {
    const pairing = this.waiting(pairingId);
    if (!pairing || this.approving.has(pairingId)) return false;
    this.approving.add(pairingId);
    try {
      const chosen = role ?? pairing.role;
      const { token } = await this.devices.create(pairing.deviceName, chosen);
      Object.assign(pairing, {
        state: 'approved',
        role: chosen,
        token,
        expiresAt: this.timers.now() + ANSWER_TTL_MS,
      } satisfies Partial<Pairing>);
    } finally {
      this.approving.delete(pairingId);
    }
    if (pairing.replaces) await this.devices.revoke(pairing.replaces);
    return true;
  }

  refuse(pairingId: string): boolean {
    const pairing = this.waiting(pairingId);
    if (!pairing || this.approving.has(pairingId)) return false;
    pairing.state = 'refused';
    pairing.expiresAt = this.timers.now() + ANSWER_TTL_MS;
    return true;
  }

  /** The phone's poll; `token` is there once, on the first poll after approval. */
  poll(pairingId: string): { state: PairingState; token?: string } | undefined {
    const pairing = this.pairings.get(pairingId);
    if (!pairing) return undefined;
    if (pairing.state === 'approved') {
      const token = pairing.token;
      pairing.token = undefined;
      return token ? { state: 'approved', token } : { state: 'approved' };
    }
    if (pairing.expiresAt <= this.timers.now()) return { state: 'expired' };
    return { state: pairing.state };
  }

  /** Drops expired offers and, long after, forgotten pairings; an hour's window that is over. */
  private sweep(): void {
    const now = this.timers.now();
    this.offers = this.offers.filter((o) => o.expiresAt > now);
    for (const [id, p] of this.pairings) if (p.expiresAt + HOUR <= now) this.pairings.delete(id);
    if (this.daemonWindow && this.daemonWindow.start + HOUR <= now) this.daemonWindow = undefined;
    for (const [ip, times] of this.ipFailures) {
      if (times.every((t) => t <= now - MINUTE)) this.ipFailures.delete(ip);
    }
  }
}
