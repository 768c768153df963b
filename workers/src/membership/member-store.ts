// The per-user membership cache in KV: the last verdict, when it was checked, and the sealed refresh token.
import * as v from 'valibot';
import { parseJsonWith, Tier } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';

export interface MemberRecord {
  tier: Tier;
  /** Epoch milliseconds of the last answer the platform gave for this user. */
  checked_at: number;
  /** The platform refresh token sealed by token-cipher.ts; null once the platform refused it. */
  refresh_token: string | null;
  /**
   * Epoch milliseconds of the last re-check that the platform failed to answer (check.ts): the
   * platform is not asked again for a while, so an outage is not hammered by every validation.
   */
  last_attempt_at?: number;
  /**
   * Licences signed below this epoch are refused; `POST /auth/logout` raises it.
   * Records from before epochs have none: 1.
   */
  epoch?: number;
}

export const memberEpoch = (record: MemberRecord | null): number => record?.epoch ?? 1;

const MemberRecord: v.GenericSchema<MemberRecord> = v.object({
  tier: Tier,
  checked_at: v.pipe(v.number(), v.safeInteger()),
  refresh_token: v.nullable(v.string()),
  last_attempt_at: v.optional(v.pipe(v.number(), v.safeInteger())),
  epoch: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1))),
});

/**
 * Records outlive every licence that may still ask about them (7-day JWT plus the grace period),
 * and then disappear, so KV keeps no refresh token of someone who stopped using the app.
 */
export const RECORD_TTL_SECONDS = 30 * 24 * 60 * 60;
const key = (userId: string) => `member:${userId}`;

export async function readMember(env: GatekeeperEnv, userId: string): Promise<MemberRecord | null> {
  const text = await env.GATEKEEPER_KV.get(key(userId), 'text');
  if (text === null) return null;
  const parsed = parseJsonWith(MemberRecord, text);
  if (!parsed.ok) console.error(`KV member record of ${userId} is unreadable: ${parsed.error}`);
  return parsed.ok ? parsed.value : null;
}

export async function writeMember(env: GatekeeperEnv, userId: string, record: MemberRecord): Promise<void> {
  await env.GATEKEEPER_KV.put(key(userId), JSON.stringify(record), { expirationTtl: RECORD_TTL_SECONDS });
}

/** Where a membership re-check reads and writes the member's record (check.ts). */
export interface MemberStore {
  read(userId: string): Promise<MemberRecord | null>;
  write(userId: string, record: MemberRecord): Promise<void>;
}

/** The record in KV, as is. The member's Durable Object (member-object.ts) passes its own store instead. */
export const kvMembers = (env: GatekeeperEnv): MemberStore => ({
  read: (userId) => readMember(env, userId),
  write: (userId, record) => writeMember(env, userId, record),
});
