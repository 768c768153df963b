// A Durable Object that makes OAuth `state` values and temporary auth codes single-use (decisions §2).
import { DurableObject } from 'cloudflare:workers';
import type { GatekeeperEnv } from './env.js';

/**
 * Each value lives in the object named after its key, so `take` of one key is serialised by the
 * runtime. `take` is one synchronous `DELETE … RETURNING`: of two concurrent takes, exactly one
 * sees the row, the other finds nothing. Expired rows read as absent and an alarm purges them.
 */
export class OneTimeStore extends DurableObject<GatekeeperEnv> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: GatekeeperEnv) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
  }

  /**
   * Whether the table exists. A lookup of an unknown key (a guess) must create no storage
   *, so the table is made by `put` only, and reading the schema writes nothing.
   */
  private hasTable(): boolean {
    return (
      this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entries'").toArray()
        .length > 0
    );
  }

  /** An emptied store deletes its storage, so used and expired values leave nothing behind. */
  private async dropIfEmpty(): Promise<void> {
    const left = this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM entries').one().n;
    if (left === 0) await this.ctx.storage.deleteAll();
  }

  /** Stores `value` under `key` for `ttlMs`. Keys are 256-bit random: a repeat is a bug and throws. */
  async put(key: string, value: string, ttlMs: number): Promise<void> {
    const expiresAt = Date.now() + ttlMs;
    this.sql.exec(
      'CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at INTEGER NOT NULL)',
    );
    this.sql.exec('INSERT INTO entries (key, value, expires_at) VALUES (?, ?, ?)', key, value, expiresAt);
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm === null || alarm > expiresAt) await this.ctx.storage.setAlarm(expiresAt);
  }

  /** Returns the value and deletes it, or null when it is unknown, already taken or expired. */
  async take(key: string): Promise<string | null> {
    if (!this.hasTable()) return null;
    const rows = this.sql
      .exec<{ value: string; expires_at: number }>(
        'DELETE FROM entries WHERE key = ? RETURNING value, expires_at',
        key,
      )
      .toArray();
    const row = rows[0];
    if (row) await this.dropIfEmpty();
    if (!row || row.expires_at <= Date.now()) return null;
    return row.value;
  }

  override async alarm(): Promise<void> {
    if (!this.hasTable()) return;
    this.sql.exec('DELETE FROM entries WHERE expires_at <= ?', Date.now());
    const next = this.sql
      .exec<{ next: number | null }>('SELECT MIN(expires_at) AS next FROM entries')
      .toArray()[0]?.next;
    if (typeof next === 'number') await this.ctx.storage.setAlarm(next);
    else await this.ctx.storage.deleteAll();
  }
}

/** The shape of every state and code we issue: randomToken(), 32 bytes in unpadded base64url. */
const ISSUED_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Client side of the store: one object per key (by name), so unrelated codes never contend.
 * A key that we cannot have issued is unknown without asking: a client sending long or odd values
 * does not get to create Durable Objects.
 */
export function oneTimeStore(env: GatekeeperEnv, kind: 'state' | 'code') {
  const stub = (key: string) => env.ONE_TIME_STORE.get(env.ONE_TIME_STORE.idFromName(`${kind}:${key}`));
  return {
    put: (key: string, value: string, ttlMs: number) => stub(key).put(key, value, ttlMs),
    take: async (key: string): Promise<string | null> =>
      ISSUED_TOKEN.test(key) ? stub(key).take(key) : null,
  };
}
