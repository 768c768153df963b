// A member who is Free, or lapsed past the grace period, keeps no tunnel: the tunnel token
// is a permanent credential, so the tunnel and its DNS record go, by the same code path as DELETE.
import type { Tier } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';
import { ApiError } from '../errors.js';
import { serialisedTier } from '../membership/member-object.js';
import { readMember } from '../membership/member-store.js';
import { tunnelService } from './service.js';
import { TUNNEL_KEY_PREFIX, TunnelStore } from './store.js';

/** Removes the member's tunnel if there is one; true when something was removed. Errors are logged, not thrown. */
export async function removeTunnelOfLapsedMember(env: GatekeeperEnv, userId: string): Promise<boolean> {
  // The tunnel record is what says a member has a tunnel: a Free member without one costs no API call.
  if ((await new TunnelStore(env.GATEKEEPER_KV).get(userId)) === null) return false;
  try {
    await tunnelService(env).remove(userId);
    console.log(`tunnel of ${userId} removed: the membership is no longer Premium`);
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not_found') return false;
    console.error(`could not remove the tunnel of lapsed member ${userId}:`, err);
    return false;
  }
}

/** Whether the tier the Gatekeeper just settled on means the member's tunnel must go. */
export const keepsNoTunnel = (tier: Tier | null): boolean => tier !== 'premium';

/** Re-checked at the platform if older than this before the daily sweep judges a member. */
const SWEEP_RECHECK_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * The daily sweep (cron): every member with a tunnel record is judged by `currentTier` as /validate
 * would (a verdict older than a day is re-checked first), and every tunnel of a member who is Free,
 * lapsed past grace, or unknown is removed.
 */
export async function sweepLapsedTunnels(env: GatekeeperEnv, now = Date.now()): Promise<number> {
  let removed = 0;
  let cursor: string | undefined;
  do {
    const page = await env.GATEKEEPER_KV.list({ prefix: TUNNEL_KEY_PREFIX, ...(cursor ? { cursor } : {}) });
    for (const { name } of page.keys) {
      const userId = name.slice(TUNNEL_KEY_PREFIX.length);
      const member = await readMember(env, userId);
      const tier =
        member && now - member.checked_at <= SWEEP_RECHECK_AGE_MS
          ? member.tier
          : await serialisedTier(env, userId, now).catch((err) => {
              // Our own failure (not the platform's, which currentTier absorbs): judge again tomorrow.
              console.error(`sweep: membership of ${userId} could not be checked:`, err);
              return 'premium' as const;
            });
      if (keepsNoTunnel(tier) && (await removeTunnelOfLapsedMember(env, userId))) removed++;
    }
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return removed;
}
