// events.db's `meta` table: small values kept beside the events (the reserved `seq`, the numbers no longer
// kept, where Kick's events through the Gatekeeper stand).
import type Database from 'better-sqlite3';
import { seqFrom } from './sequence.js';

export class MetaTable {
  readonly #get: Database.Statement<[string], { value: string }>;
  readonly #set: Database.Statement<[string, string]>;

  constructor(db: Database.Database) {
    this.#get = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?');
    this.#set = db.prepare<[string, string]>(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    );
  }

  get(key: string): string | undefined {
    return this.#get.get(key)?.value;
  }

  /** Writes a value (in the file when this returns). */
  set(key: string, value: string): void {
    this.#set.run(key, value);
  }

  /** A `seq` mark, or undefined when there is none or it is not a number. */
  seq(key: string): number | undefined {
    return seqFrom(this.get(key));
  }

  /** Sets a `seq` mark that only goes up. */
  raise(key: string, value: number): void {
    const old = this.seq(key);
    if (old !== undefined && old >= value) return;
    this.set(key, String(value));
  }
}
