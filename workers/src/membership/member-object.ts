// The member's Durable Object (one per member, named `member:<id>`): it orders what must never be undone
// by a concurrent request of the same member, which eventually consistent KV alone cannot. It keeps the
// member's licence epoch, so a logout is never lost to a membership re-check that read the record before
// it (every write of the record goes through here and keeps the higher epoch), and it runs a member's
// operations one at a time (MemberLanes, one lane per kind): the membership re-checks here (refresh-token
// rotation), the tunnel provisions (tunnels/member-provision.ts) and the relay's media quota
// (relay/media-quota.ts) in the folders that own them. The Worker binds the object with those operations
// composed in (../member.ts).
import { DurableObject } from 'cloudflare:workers';
import type { Tier } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';
import { currentTier } from './check.js';
import {
  type MemberRecord,
  type MemberStore,
  memberEpoch,
  RECORD_TTL_SECONDS,
  readMember,
  writeMember,
} from './member-store.js';

const EPOCH = 'epoch';
const RECHECKS = 'membership-recheck';

/** What a login stores: the verdict and the platform's token, never the epoch (that only rises). */
export type LoginRecord = Pick<MemberRecord, 'tier' | 'checked_at' | 'refresh_token'>;

/** One kind of operation of this member: the last one queued, and how many wait or run. */
interface Lane {
  tail: Promise<unknown>;
  inFlight: number;
}

/**
 * A member's operations, one at a time per lane (one lane per kind of operation): each runs once every
 * earlier one of its lane has ended, failed ones included, and sees what the previous one stored. Lanes
 * do not wait for each other. Held as an instance field, so it is no method callers reach over RPC.
 */
export class MemberLanes {
  readonly #lanes = new Map<string, Lane>();

  run<T>(lane: string, operation: () => T | Promise<T>): Promise<T> {
    let state = this.#lanes.get(lane);
    if (!state) {
      state = { tail: Promise.resolve(), inFlight: 0 };
      this.#lanes.set(lane, state);
    }
    const current = state;
    current.inFlight += 1;
    const result = current.tail.then(operation);
    current.tail = result.catch(() => {});
    return result.finally(() => {
      current.inFlight -= 1;
    });
  }

  /** Operations of `lane` waiting or running. */
  inFlight(lane: string): number {
    return this.#lanes.get(lane)?.inFlight ?? 0;
  }
}

export class MemberObject extends DurableObject<GatekeeperEnv> {
  /** One at a time for this member: what features composed in run goes through here too. */
  protected readonly lanes = new MemberLanes();
  /** The record as this object last wrote it, and the KV writes of it, in the order it changed. */
  #written: MemberRecord | null = null;
  #mirror: Promise<unknown> = Promise.resolve();

  readonly #members: MemberStore = {
    read: (userId) => readMember(this.env, userId),
    write: async (userId, record) => {
      await this.#write(userId, record);
    },
  };

  /**
   * Whether this object's storage holds something that outlives the member's record (the epoch does
   * not): then the alarm forgets the epoch alone. None here; an operation composed in may keep some.
   */
  protected outlivesRecord(): boolean {
    return false;
  }

  /** The member's tier now, re-checked with the platform when due; re-checks run one at a time. */
  async tier(userId: string, now: number): Promise<Tier | null> {
    return this.lanes.run(RECHECKS, () => currentTier(this.env, userId, now, this.#members));
  }

  /**
   * Signs every licence of the member out: the epoch rises above the licence's and the stored one.
   * False, and nothing changes, when the licence presented is itself below the member's epoch
   * (revoked): a stolen old licence cannot sign out later logins. Not queued behind a re-check in
   * flight: that re-check's writes keep the higher epoch (#write).
   */
  async logout(userId: string, licenceEpoch: number): Promise<boolean> {
    const known = this.#written ?? (await readMember(this.env, userId));
    // Synchronous from here to the stored epoch: no other call of this object runs in between, and
    // a write made while KV answered is the one that counts.
    const base = this.#written ?? known;
    const epoch = Math.max(memberEpoch(base), this.#epoch());
    if (licenceEpoch < epoch) return false;
    const next = Math.max(epoch, licenceEpoch) + 1;
    this.ctx.storage.kv.put(EPOCH, next);
    // No record left (it expired): one that knows nothing but the epoch, and whose tier needs a new login.
    await this.#write(userId, {
      ...(base ?? { tier: 'free', checked_at: 0, refresh_token: null }),
      epoch: next,
    });
    return true;
  }

  /** A new login's verdict and token; returns the member's epoch, kept so revoked licences stay revoked. */
  async login(userId: string, fields: LoginRecord): Promise<number> {
    const previous = this.#written ?? (await readMember(this.env, userId));
    return memberEpoch(await this.#write(userId, { ...fields, epoch: memberEpoch(previous) }));
  }

  /** The epoch is forgotten with the member's record in KV (records from before epochs count as 1). */
  override async alarm(): Promise<void> {
    if (this.outlivesRecord()) {
      this.ctx.storage.kv.delete(EPOCH);
      return;
    }
    await this.ctx.storage.deleteAll();
  }

  #epoch(): number {
    return this.ctx.storage.kv.get<number>(EPOCH) ?? 1;
  }

  /**
   * Writes the record to KV with the highest epoch known: a record prepared from a copy read before a
   * logout (a re-check waiting on the platform) keeps the logout's epoch. KV gets the latest record
   * when each write's turn comes, in order, so the last one KV keeps is the latest.
   */
  async #write(userId: string, record: MemberRecord): Promise<MemberRecord> {
    const epoch = Math.max(memberEpoch(record), this.#epoch());
    this.ctx.storage.kv.put(EPOCH, epoch);
    const merged: MemberRecord = { ...record, epoch };
    this.#written = merged;
    await this.ctx.storage.setAlarm(Date.now() + RECORD_TTL_SECONDS * 1000);
    const mirrored = this.#mirror.then(() => {
      const latest = this.#written ?? merged;
      return writeMember(this.env, userId, latest);
    });
    this.#mirror = mirrored.catch(() => {});
    await mirrored;
    return merged;
  }
}

/** The member's object (binding MEMBERSHIP_RECHECK), for the operations of any feature. */
export const memberObject = (env: GatekeeperEnv, userId: string) =>
  env.MEMBERSHIP_RECHECK.get(env.MEMBERSHIP_RECHECK.idFromName(`member:${userId}`));

/** The member's tier now, through their Durable Object: concurrent calls anywhere run one at a time. */
export function serialisedTier(env: GatekeeperEnv, userId: string, now = Date.now()): Promise<Tier | null> {
  return memberObject(env, userId).tier(userId, now);
}

/** Raises the member's epoch; false when the licence presented was already revoked. */
export function logoutMember(env: GatekeeperEnv, userId: string, licenceEpoch: number): Promise<boolean> {
  return memberObject(env, userId).logout(userId, licenceEpoch);
}

/** Stores a login's verdict; returns the member's epoch, which the licence of this login carries. */
export function recordLogin(env: GatekeeperEnv, userId: string, fields: LoginRecord): Promise<number> {
  return memberObject(env, userId).login(userId, fields);
}
