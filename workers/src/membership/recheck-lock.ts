// Serialises each member's membership re-check (refresh-token rotation) in one Durable Object per member,
// so two re-checks in different locations cannot both spend the same refresh token and lapse a paying
// member (eventually consistent KV alone cannot order them).
import { DurableObject } from 'cloudflare:workers';
import type { Tier } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';
import { currentTier } from './check.js';

export class MembershipRecheck extends DurableObject<GatekeeperEnv> {
  /** The re-checks of this member, one after the other: the next one sees the verdict the previous stored. */
  #queue: Promise<unknown> = Promise.resolve();

  async tier(userId: string, now: number): Promise<Tier | null> {
    const run = this.#queue.then(() => currentTier(this.env, userId, now));
    this.#queue = run.catch(() => {});
    return run;
  }
}

/**
 * The member's tier now, through their Durable Object: concurrent calls anywhere run one at a time.
 * Nothing is stored in the object; it only orders the calls.
 */
export function serialisedTier(env: GatekeeperEnv, userId: string, now = Date.now()): Promise<Tier | null> {
  const stub = env.MEMBERSHIP_RECHECK.get(env.MEMBERSHIP_RECHECK.idFromName(`member:${userId}`));
  return stub.tier(userId, now);
}
