// The member's relay media quota, counted in the member's Durable Object (membership/member-object.ts):
// one row per file reserved, in the object's SQLite storage, so concurrent uploads can never reserve
// more than the limit between them. The reservations stay as long as the files they count, which
// outlive the member's record.
import type { GatekeeperEnv } from '../env.js';
import { memberObject } from '../membership/member-object.js';

/** The lane of the member's object that reservations run in. */
export const MEDIA_RESERVATIONS = 'relay-media';

/** A relay media reservation: refused (`ok: false`) past the quota; `fresh` when this call made it. */
export interface MediaReservation {
  ok: boolean;
  fresh: boolean;
  used: number;
}

function mediaTable(sql: SqlStorage): SqlStorage {
  sql.exec('CREATE TABLE IF NOT EXISTS relay_media (name TEXT PRIMARY KEY, bytes INTEGER NOT NULL)');
  return sql;
}

/** Bytes of relay media reserved by the member, in the member object's storage. */
export function mediaUsage(sql: SqlStorage): number {
  return mediaTable(sql)
    .exec<{ used: number }>('SELECT COALESCE(SUM(bytes), 0) AS used FROM relay_media')
    .one().used;
}

/**
 * Reserves `bytes` of the member's quota (`limit` in all) for the file `name`, once: a name already
 * reserved costs nothing more (a re-upload, or two uploads of one file at once), a new one is refused
 * when it would take the member past the limit. One synchronous step of the member's object.
 */
export function reserveMedia(sql: SqlStorage, name: string, bytes: number, limit: number): MediaReservation {
  mediaTable(sql);
  if (sql.exec('SELECT 1 FROM relay_media WHERE name = ?', name).toArray().length > 0) {
    return { ok: true, fresh: false, used: mediaUsage(sql) };
  }
  const before = mediaUsage(sql);
  if (before + bytes > limit) return { ok: false, fresh: false, used: before };
  sql.exec('INSERT INTO relay_media (name, bytes) VALUES (?, ?)', name, bytes);
  return { ok: true, fresh: true, used: before + bytes };
}

/** Reserves relay media bytes for one of the member's files, once, through the member's object. */
export function reserveMemberMedia(
  env: GatekeeperEnv,
  userId: string,
  name: string,
  bytes: number,
  limit: number,
): Promise<MediaReservation> {
  return memberObject(env, userId).reserveMedia(name, bytes, limit);
}
