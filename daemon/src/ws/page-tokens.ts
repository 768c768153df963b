// Per-page-load WebSocket tokens: random, single use, bound to one overlay, expiring unused (interface §5.2, decisions §3).
import { randomFillSync } from 'node:crypto';

interface PageTokenOptions {
  /** How long an unused token stays valid (decisions §3: 5 minutes). */
  ttlMs?: number;
  /** Clock, injectable so expiry can be tested without waiting. */
  now?: () => number;
  /** Pending tokens kept at most; the oldest are forgotten first, so a flood of page loads cannot grow memory. */
  maxPending?: number;
}

const TOKEN_TTL_MS = 5 * 60_000;

const TOKEN_BYTES = 24;
/** Random bytes drawn from the CSPRNG in one call for many tokens; each byte goes into one token only. */
const POOL_BYTES = TOKEN_BYTES * 256;
const pool = Buffer.allocUnsafeSlow(POOL_BYTES);
let poolOffset = POOL_BYTES;

/** 192 random bits, base64url; one randomFillSync per 256 tokens instead of a randomBytes call each. */
function randomToken(): string {
  if (poolOffset + TOKEN_BYTES > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const token = pool.toString('base64url', poolOffset, poolOffset + TOKEN_BYTES);
  poolOffset += TOKEN_BYTES;
  return token;
}

export class PageTokens {
  readonly #pending = new Map<string, { overlayId: string; expiresAt: number }>();
  /**
   * Tokens in the order they were issued (which is expiry order), from #head on; spent ones stay until
   * they reach the head. Kept apart from the Map because taking a Map's first key after many deletions
   * from its front walks every deleted slot: that made each issue O(pending) once the cap was reached.
   */
  #order: string[] = [];
  #head = 0;
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
    while (this.#pending.size >= this.#maxPending && this.#head < this.#order.length) {
      this.#pending.delete(this.#order[this.#head] ?? '');
      this.#order[this.#head++] = '';
    }
    const token = randomToken();
    this.#pending.set(token, { overlayId, expiresAt: this.#now() + this.#ttlMs });
    this.#order.push(token);
    this.#compact();
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
    // Expiry order (constant ttl, monotonic-enough clock): stop at the first live one.
    while (this.#head < this.#order.length) {
      const token = this.#order[this.#head] ?? '';
      const entry = this.#pending.get(token);
      if (entry && entry.expiresAt > now) break;
      if (entry) this.#pending.delete(token);
      // The slot is left empty rather than holding a spent token until the next compaction.
      this.#order[this.#head++] = '';
    }
  }

  /** Drops the consumed head of #order, and spent tokens once they outnumber the pending ones: O(1) amortised. */
  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#head);
      this.#head = 0;
    }
    if (this.#order.length - this.#head > 2 * Math.max(this.#pending.size, 1024)) {
      this.#order = this.#order.slice(this.#head).filter((token) => this.#pending.has(token));
      this.#head = 0;
    }
  }
}
