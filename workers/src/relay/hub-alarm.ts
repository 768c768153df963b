// A hub's alarm (relay/hub.ts): the licence's `exp`, the end of the publisher's time to come back, the
// member re-check every minute, and the paced viewer count, each due at its time on the one alarm.
import { RELAY_CLOSE, RELAY_LIMITS } from '../../../shared/protocol/index.js';
import { type HubStore, KEY } from './hub-store.js';
import { safeClose } from './names.js';

/**
 * A publisher closed at its licence's `exp` has this long to come back with a refreshed licence; its
 * viewers, the snapshot and the kept messages wait for it. Past that, the publication ends.
 */
export const PUBLISHER_RETURN_MS = 10 * 60_000;

/** What the alarm's steps do to the hub. */
export interface AlarmSteps {
  forget(reason: string): Promise<void>;
  /** The member's stored verdict and licence epoch: Free or signed out ends the publication. */
  recheck(): Promise<void>;
  /** Takes each shard's own count of its viewers. */
  reconcile(): Promise<void>;
  /** Tells the publisher the viewer count, paced. */
  countChanged(): void;
}

export class HubAlarm {
  constructor(
    readonly store: HubStore,
    readonly steps: AlarmSteps,
  ) {}

  // Each step looks at what is due now and leaves it done, so a second run at the same instant does
  // nothing more, and arm only ever picks times still ahead.
  async run(): Promise<void> {
    const now = Date.now();
    const publication = this.store.publication();
    if (publication && now >= publication.exp * 1000) {
      // No tolerance: the daemon reconnects with its refreshed licence; viewers wait for it.
      for (const ws of this.store.publishers()) {
        safeClose(ws, RELAY_CLOSE.licenceExpired, 'the licence expired');
      }
    }
    if (this.abandoned(now)) {
      // Nobody came back with a licence in time: nothing vouches for the publication any more, so it
      // ends, and so do the re-checks.
      await this.steps.forget('the publisher did not come back after its licence expired');
    }
    if (this.#watching() && now - (this.store.get<number>(KEY.checkedAt) ?? 0) >= RELAY_LIMITS.lapseCheckMs) {
      await this.steps.recheck();
      await this.steps.reconcile();
    }
    const dueAt = this.store.get<number>(KEY.countDueAt);
    if (dueAt !== undefined && now >= dueAt) {
      this.store.delete(KEY.countDueAt);
      this.steps.countChanged();
    }
    this.arm();
  }

  /** Published, the last licence expired more than PUBLISHER_RETURN_MS ago, and no publisher is back. */
  abandoned(now: number): boolean {
    const publication = this.store.publication();
    return (
      publication !== undefined &&
      now >= publication.exp * 1000 + PUBLISHER_RETURN_MS &&
      this.store.publishers().length === 0 &&
      this.store.snapshot() !== undefined
    );
  }

  /**
   * Sets the alarm to the next thing due: the licence's exp, then the end of the publisher's time to
   * come back, the next re-check, the paced viewer count.
   */
  arm(): void {
    const now = Date.now();
    const due: number[] = [];
    const publication = this.store.publication();
    if (publication && this.#watching()) {
      const exp = publication.exp * 1000;
      if (now < exp) due.push(exp);
      else if (now < exp + PUBLISHER_RETURN_MS) due.push(exp + PUBLISHER_RETURN_MS);
    }
    if (this.#watching()) due.push((this.store.get<number>(KEY.checkedAt) ?? 0) + RELAY_LIMITS.lapseCheckMs);
    const countDueAt = this.store.get<number>(KEY.countDueAt);
    if (countDueAt !== undefined) due.push(countDueAt);
    const storage = this.store.ctx.storage;
    if (due.length === 0) void storage.deleteAlarm();
    else void storage.setAlarm(Math.min(...due));
  }

  /** Something is published or a publisher is connected: the member is re-checked every minute. */
  #watching(): boolean {
    return this.store.snapshot() !== undefined || this.store.publishers().length > 0;
  }
}
