// The audit of paired devices (decisions-3 §11): every accepted (2xx) request of a device other than
// `GET`, kept in events.db's `audit` table (the newest 10,000) and read a page at a time.
import type Database from 'better-sqlite3';
import type { AuditEntry } from '../../../shared/protocol/devices.js';
import { errorMessage } from '../errors.js';

export type { AuditEntry };

/** At most this many entries are kept; the oldest go first. */
export const AUDIT_KEPT_MAX = 10_000;
/** Past the limit the oldest go down to this many below it, so the table is pruned once per this many
 * requests rather than at each one. */
const AUDIT_PRUNE_SLACK = 1000;
/** Longest text kept per field: a device's request cannot make a row grow without bound. */
const FIELD_MAX = { deviceId: 128, deviceName: 128, method: 16, path: 2048, detail: 300 } as const;

/** What a device's request left in the audit. */
export interface AuditRecord {
  deviceId: string;
  deviceName: string;
  method: string;
  path: string;
  status: number;
  /** What the request acted on, when its path does not say (the rule a rule test ran). */
  detail?: string | undefined;
}

interface AuditOptions {
  log: (line: string) => void;
  now?: (() => number) | undefined;
}

interface AuditRow {
  id: number;
  at: number;
  deviceId: string;
  deviceName: string;
  method: string;
  path: string;
  status: number;
  detail: string | null;
}

export class AuditLog {
  readonly #options: AuditOptions;
  readonly #insert: Database.Statement<[number, string, string, string, string, number, string | null]>;
  readonly #page: Database.Statement<[number, number], AuditRow>;
  readonly #count: Database.Statement<[], { n: number }>;
  readonly #deleteOldest: Database.Statement<[number]>;
  /** Entries in the table (counted at start, then kept up to date), for the limit. */
  #kept: number;

  /** `database`: events.db, whose schema has the `audit` table (journal/migrations.ts). */
  constructor(database: Database.Database, options: AuditOptions) {
    this.#options = options;
    this.#insert = database.prepare(
      'INSERT INTO audit (at, device_id, device_name, method, path, status, detail) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.#page = database.prepare(
      `SELECT id, at, device_id AS deviceId, device_name AS deviceName, method, path, status, detail
       FROM audit WHERE id > ? ORDER BY id LIMIT ?`,
    );
    this.#count = database.prepare('SELECT COUNT(*) AS n FROM audit');
    // Everything but the newest N: the id N+1 places from the newest and all below it.
    this.#deleteOldest = database.prepare(
      'DELETE FROM audit WHERE id <= (SELECT id FROM audit ORDER BY id DESC LIMIT 1 OFFSET ?)',
    );
    this.#kept = this.#count.get()?.n ?? 0;
  }

  /** Keeps one accepted request of a device. Never throws: an entry that cannot be written is a log line. */
  record(entry: AuditRecord): void {
    try {
      this.#insert.run(
        this.#options.now?.() ?? Date.now(),
        entry.deviceId.slice(0, FIELD_MAX.deviceId),
        entry.deviceName.slice(0, FIELD_MAX.deviceName),
        entry.method.slice(0, FIELD_MAX.method),
        entry.path.slice(0, FIELD_MAX.path),
        Math.trunc(entry.status),
        entry.detail?.slice(0, FIELD_MAX.detail) ?? null,
      );
    } catch (err) {
      this.#options.log(
        `[audit] ${String(entry.method).slice(0, 16)} ${String(entry.path).slice(0, 200)} of device ${String(entry.deviceId).slice(0, 64)} could not be kept: ${errorMessage(err)}`,
      );
      return;
    }
    this.#kept += 1;
    if (this.#kept > AUDIT_KEPT_MAX) this.#prune();
  }

  /** Entries after the id `after` (from the oldest when undefined), oldest first, at most `limit`; `next`
   * is the `after` of the next page, null on the last one. */
  list(after: number | undefined, limit: number): { entries: AuditEntry[]; next: number | null } {
    const rows = this.#page.all(after ?? 0, limit + 1);
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return {
      entries: page.map(({ detail, ...r }) => ({
        ...r,
        at: new Date(r.at).toISOString(),
        ...(detail === null ? {} : { detail }),
      })),
      next: more ? (page.at(-1)?.id ?? null) : null,
    };
  }

  /** The oldest go, down to AUDIT_KEPT_MAX − AUDIT_PRUNE_SLACK (counted again: the table is the truth). */
  #prune(): void {
    const keep = AUDIT_KEPT_MAX - AUDIT_PRUNE_SLACK;
    try {
      if ((this.#count.get()?.n ?? 0) > keep) this.#deleteOldest.run(keep);
      this.#kept = this.#count.get()?.n ?? 0;
    } catch (err) {
      this.#options.log(`[audit] the oldest entries could not be removed: ${errorMessage(err)}`);
    }
  }
}
