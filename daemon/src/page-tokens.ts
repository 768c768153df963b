// Per-page-load WebSocket tokens: random, single use, bound to one overlay, expiring unused (interface §5.2, decisions §3).
import { randomBytes } from 'node:crypto';

export interface PageTokenOptions {
  /** How long an unused token stays valid (decisions §3: 5 minutes). */
  ttlMs?: number;
  /** Clock, injectable so expiry can be tested without waiting. */
  now?: () => number;
  /** Pending tokens kept at most; the oldest are forgotten first, so a flood of page loads cannot grow memory. */
  maxPending?: number;
}

export const TOKEN_TTL_MS = 5 * 60_000;

export class PageTokens {
  readonly #pending = new Map<string, { overlayId: string; expiresAt: number }>();
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #maxPending: number;

  constructor(options: PageTokenOptions = {}) {
    this.#ttlMs = options.ttlMs ?? TOKEN_TTL_MS;
    this.#now = options.now ?? Date.now;
    this.#maxPending = options.maxPending ?? 10_000;
  }

  /** A fresh token for one load of the overlay's page: 192 random bits, base64url. */
  issue(overlayId: string): string {
    this.#sweep();
    while (this.#pending.size >= this.#maxPending) {
      const oldest = this.#pending.keys().next();
      if (oldest.done) break;
      this.#pending.delete(oldest.value);
    }
    const token = randomBytes(24).toString('base64url');
    this.#pending.set(token, { overlayId, expiresAt: this.#now() + this.#ttlMs });
    return token;
  }

  /**
   * Spends a token. It is gone after the first attempt whatever the outcome, so a token
   * presented for the wrong overlay cannot be retried for the right one.
   */
  consume(token: string, overlayId: string): boolean {
    const entry = this.#pending.get(token);
    if (!entry) return false;
    this.#pending.delete(token);
    return entry.overlayId === overlayId && this.#now() < entry.expiresAt;
  }

  /** Forgets every token of an overlay (it was deleted). */
  revokeOverlay(overlayId: string): void {
    for (const [token, entry] of this.#pending)
      if (entry.overlayId === overlayId) this.#pending.delete(token);
  }

  get size(): number {
    return this.#pending.size;
  }

  #sweep(): void {
    const now = this.#now();
    // Insertion order is expiry order (constant ttl, monotonic-enough clock), so stop at the first live one.
    for (const [token, entry] of this.#pending) {
      if (entry.expiresAt > now) break;
      this.#pending.delete(token);
    }
  }
}
