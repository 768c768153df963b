// The current tier of a signed-in user: the cached verdict, re-checked at the platform at most hourly.
import type { RemoteConfig } from '../../../shared/config.js';
import type { Tier } from '../../../shared/protocol/index.js';
import { loadRemoteConfig } from '../config/remote-config.js';
import type { GatekeeperEnv } from '../env.js';
import { openToken, sealToken } from '../token-cipher.js';
import { kvMembers, type MemberRecord, type MemberStore } from './member-store.js';
import { patreonProvider } from './patreon.js';
import { MembershipError, type PlatformTokens } from './provider.js';
import { resolveTier } from './tier.js';

/** Decisions §2: the platform is asked at most once an hour per user. */
const RECHECK_INTERVAL_MS = 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;
/**
 * After a re-check the platform failed to answer, it is not asked again for this long (the cached
 * verdict, within grace, answers meanwhile): an outage costs one platform call per user per five
 * minutes, not one per validation.
 */
export const RETRY_AFTER_FAILURE_MS = 5 * 60 * 1000;

/**
 * Resolves the user's tier now; null when no membership is on record (never signed in here, or the
 * record expired), which only a new login can settle.
 * - A verdict younger than an hour is used as is; so is one whose last re-check failed less than
 *   RETRY_AFTER_FAILURE_MS ago (within grace).
 * - Otherwise the stored refresh token is exchanged (the rotated one is stored at once, before
 *   anything else can fail) and the identity re-read.
 * - The platform unavailable (network, timeout, 429, 5xx, any failure other than a refused grant,
 *   including every identity failure after a good refresh): the last verdict stands while it is
 *   younger than `grace.hours`; after that the user counts as lapsed (`free`). A platform that
 *   cannot confirm a membership for days is treated like one that denies it.
 * - The platform refusing the refresh token (`invalid_grant`: access revoked at the platform): lapsed,
 *   `free`, and the dead token dropped. No other failure ever clears a stored token.
 */
export async function currentTier(
  env: GatekeeperEnv,
  userId: string,
  now = Date.now(),
  members: MemberStore = kvMembers(env),
): Promise<Tier | null> {
  const record = await members.read(userId);
  if (!record) return null;
  const fresh = freshVerdict(record, now);
  if (fresh !== undefined) return fresh;
  const config = await loadRemoteConfig(env);
  if (record.last_attempt_at !== undefined && now - record.last_attempt_at < RETRY_AFTER_FAILURE_MS) {
    return withinGrace(record, config, now);
  }
  const sealed = record.refresh_token;
  const refreshToken = sealed === null ? null : await openToken(env, userId, sealed);
  if (refreshToken === null) return lapse(members, userId, record, now);

  const provider = patreonProvider(env);
  let tokens: PlatformTokens;
  try {
    tokens = await provider.refresh(refreshToken);
  } catch (err) {
    if (!(err instanceof MembershipError)) throw err;
    console.error(`membership re-check of ${userId} failed at the refresh (${err.kind}): ${err.message}`);
    if (err.kind === 'rejected') {
      // A concurrent request may have spent this token a moment ago (rotation): the refusal is then
      // about our stale copy, not about the member, and that request settles the verdict.
      const latest = await rotatedElsewhere(members, userId, sealed);
      if (latest) return latest.tier;
      return lapse(members, userId, record, now);
    }
    await members.write(userId, { ...record, last_attempt_at: now });
    return withinGrace(record, config, now);
  }
  // The rotated token is stored at once: the one just used is spent at the platform, whatever
  // happens next.
  const working: MemberRecord = {
    ...record,
    refresh_token: await sealToken(env, userId, tokens.refreshToken),
  };
  await members.write(userId, working);
  try {
    const identity = await provider.identity(tokens.accessToken);
    const tier = resolveTier(identity, env.MEMBERSHIP_CAMPAIGN_ID, config.membership.tiers);
    const { last_attempt_at: _failed, ...settled } = working;
    await members.write(userId, { ...settled, tier, checked_at: now });
    return tier;
  } catch (err) {
    if (!(err instanceof MembershipError)) throw err;
    // After a good refresh, no identity failure is a verdict (patreon.ts): the rotated token stays.
    console.error(`membership re-check of ${userId} failed at the identity (${err.kind}): ${err.message}`);
    await members.write(userId, { ...working, last_attempt_at: now });
    return withinGrace(record, config, now);
  }
}

/**
 * The stored verdict when it was given less than an hour ago, which currentTier answers as is; undefined
 * when a re-check is due (or no record is on hand).
 */
export function freshVerdict(record: MemberRecord | null, now: number): Tier | undefined {
  return record !== null && now - record.checked_at < RECHECK_INTERVAL_MS ? record.tier : undefined;
}

/**
 * How long a refused refresh waits for a concurrent request's rotated token to land in KV before it
 * believes the refusal: that request writes the new token right after the platform answered it.
 */
const ROTATION_SETTLE_MS = 500;

/** The member's record when another request has replaced the refresh token we used, else null. */
async function rotatedElsewhere(
  members: MemberStore,
  userId: string,
  sealed: string | null,
): Promise<MemberRecord | null> {
  for (let attempt = 0; attempt < 2; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, ROTATION_SETTLE_MS));
    const latest = await members.read(userId);
    if (latest && latest.refresh_token !== sealed) return latest;
  }
  return null;
}

/** The platform could not answer: the last verdict stands for `grace.hours` after it was given. */
function withinGrace(record: MemberRecord, config: RemoteConfig, now: number): Tier {
  return now - record.checked_at <= config.grace.hours * HOUR_MS ? record.tier : 'free';
}

/** The platform no longer vouches for the user: remember `free` and drop the dead refresh token. */
async function lapse(
  members: MemberStore,
  userId: string,
  record: MemberRecord,
  now: number,
): Promise<Tier | null> {
  await members.write(userId, { ...record, tier: 'free', checked_at: now, refresh_token: null });
  return 'free';
}
