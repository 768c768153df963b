// The member's Durable Object (one per member, by name): it orders what must never be undone by a
// concurrent request. It keeps the member's licence epoch, so a logout is never lost to a membership
// re-check that read the record before it (every write of the record goes through here and keeps the
// higher epoch); it runs the re-checks (refresh-token rotation) one at a time; and it runs the
// member's tunnel provisions one at a time, so a failed provision's rollback never deletes a tunnel
// that a concurrent one handed out. Eventually consistent KV alone can order none of these.
import { DurableObject } from 'cloudflare:workers';
import type { ErrorCode, ProvisionResponse, Tier } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';
import { ApiError } from '../errors.js';
import { tunnelService } from '../tunnels/service.js';
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

/** What a login stores: the verdict and the platform's token, never the epoch (that only rises). */
export type LoginRecord = Pick<MemberRecord, 'tier' | 'checked_at' | 'refresh_token'>;

/** A provision's answer across the object's boundary: errors keep their code and headers. */
export type ProvisionOutcome =
  | { ok: true; created: boolean; response: ProvisionResponse }
  | { ok: false; code: ErrorCode; message: string; headers: Record<string, string> };

/** A relay media reservation: refused (`ok: false`) past the quota; `fresh` when this call made it. */
export interface MediaReservation {
  ok: boolean;
  fresh: boolean;
  used: number;
}

export class MembershipRecheck extends DurableObject<GatekeeperEnv> {
  /** The re-checks of this member, one after the other: the next one sees the verdict the previous stored. */
  #queue: Promise<unknown> = Promise.resolve();
  /** The member's provisions, one after the other (rollback included). */
  #provisions: Promise<unknown> = Promise.resolve();
  #provisionsInFlight = 0;
  /** The record as this object last wrote it, and the KV writes of it, in the order it changed. */
  #written: MemberRecord | null = null;
  #mirror: Promise<unknown> = Promise.resolve();

  /** Provisions of this member waiting or running (the tunnel suites watch it). */
  get provisionsInFlight(): number {
    return this.#provisionsInFlight;
  }

  readonly #members: MemberStore = {
    read: (userId) => readMember(this.env, userId),
    write: async (userId, record) => {
      await this.#write(userId, record);
    },
  };

  async tier(userId: string, now: number): Promise<Tier | null> {
    const run = this.#queue.then(() => currentTier(this.env, userId, now, this.#members));
    this.#queue = run.catch(() => {});
    return run;
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

  async provision(userId: string): Promise<ProvisionOutcome> {
    this.#provisionsInFlight += 1;
    const run = this.#provisions.then(async (): Promise<ProvisionOutcome> => {
      try {
        return { ok: true, ...(await tunnelService(this.env).provision(userId)) };
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        return { ok: false, code: err.code, message: err.message, headers: err.headers };
      }
    });
    this.#provisions = run.catch(() => {});
    try {
      return await run;
    } finally {
      this.#provisionsInFlight -= 1;
    }
  }

  /**
   * Reserves `bytes` of the member's relay media quota (`limit` in all) for the file `name`, once: a name
   * already reserved costs nothing more (a re-upload, or two uploads of one file at once), a new one is
   * refused when it would take the member past the limit. One synchronous step of this object, so
   * concurrent uploads can never reserve more than the limit between them.
   */
  reserveMedia(name: string, bytes: number, limit: number): MediaReservation {
    const sql = this.#mediaTable();
    if (sql.exec('SELECT 1 FROM relay_media WHERE name = ?', name).toArray().length > 0) {
      return { ok: true, fresh: false, used: this.mediaUsage() };
    }
    const before = this.mediaUsage();
    if (before + bytes > limit) return { ok: false, fresh: false, used: before };
    sql.exec('INSERT INTO relay_media (name, bytes) VALUES (?, ?)', name, bytes);
    return { ok: true, fresh: true, used: before + bytes };
  }

  /** Bytes of relay media reserved by the member. */
  mediaUsage(): number {
    return this.#mediaTable()
      .exec<{ used: number }>('SELECT COALESCE(SUM(bytes), 0) AS used FROM relay_media')
      .one().used;
  }

  #mediaTable(): SqlStorage {
    const sql = this.ctx.storage.sql;
    sql.exec('CREATE TABLE IF NOT EXISTS relay_media (name TEXT PRIMARY KEY, bytes INTEGER NOT NULL)');
    return sql;
  }

  /**
   * The epoch is forgotten with the member's record in KV (records from before epochs count as 1). The
   * relay media reservations stay as long as the files they count, which outlive the record.
   */
  override async alarm(): Promise<void> {
    if (this.mediaUsage() > 0) {
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

const memberObject = (env: GatekeeperEnv, userId: string) =>
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

/** Reserves relay media bytes for one of the member's files, once (MembershipRecheck.reserveMedia). */
export function reserveMemberMedia(
  env: GatekeeperEnv,
  userId: string,
  name: string,
  bytes: number,
  limit: number,
): Promise<MediaReservation> {
  return memberObject(env, userId).reserveMedia(name, bytes, limit);
}

/** Provisions the member's tunnel after any provision of theirs in progress has ended. */
export async function serialisedProvision(
  env: GatekeeperEnv,
  userId: string,
): Promise<{ created: boolean; response: ProvisionResponse }> {
  const outcome = await memberObject(env, userId).provision(userId);
  if (!outcome.ok) throw new ApiError(outcome.code, outcome.message, outcome.headers);
  return { created: outcome.created, response: outcome.response };
}
