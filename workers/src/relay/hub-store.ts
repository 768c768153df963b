// What a hub keeps (relay/hub.ts): its storage keys and tables, the publication, the snapshot and where
// the stream of frames stands, the publisher's sockets, and its shards. Each part of the hub reads and
// writes through this one view of the object's storage.
import type { GatekeeperEnv } from '../env.js';
import { hubName, shardName } from './names.js';

/** The tag of the publisher's socket. */
export const PUBLISHER = 'publisher';

export type ShardStub = ReturnType<GatekeeperEnv['RELAY_SHARD']['get']>;

/** Who publishes this overlay, as the Worker vouched for at the publisher's last connect. */
export interface Publication {
  member: string;
  subdomain: string;
  overlayId: string;
  /** The licence's `exp` (seconds) and epoch. */
  exp: number;
  epoch: number;
}

/** Where the stream of frames stands. */
export interface Stream {
  /** The last position handed out (never reset, so shards never see a position twice). */
  pos: number;
  /** The highest `seq` relayed since the first publish; absent when none. */
  lastSeq?: number;
  /** The highest `seq` no longer kept (a resume from below it has a gap); absent until a message came. */
  floor?: number;
  /** Messages kept in the replay table, and their bytes. */
  count: number;
  bytes: number;
  /** The bytes of every message ever kept (a kept message's `start` is this before it was kept). */
  total?: number;
}

/** Storage keys (the object's synchronous key-value store, in SQLite). */
export const KEY = {
  publication: 'publication',
  /** The `init` a page would get now, as text; absent while nothing is published. */
  snapshot: 'snapshot',
  /** Where the stream of frames stands (Stream): one row, written once per frame. */
  stream: 'stream',
  /** When the member was last found Premium (ms). */
  checkedAt: 'checkedAt',
  /** The viewer count the publisher last got, and when. */
  countSent: 'countSent',
  countDueAt: 'countDueAt',
} as const;

type Row = Record<string, SqlStorageValue>;

export class HubStore {
  /** Whether this instance made sure of its tables (a publisher's connect does, before anything is written). */
  #schemaReady = false;

  constructor(
    readonly ctx: DurableObjectState,
    readonly env: GatekeeperEnv,
  ) {}

  // Nothing is written before a publisher comes: a viewer, a page or a media request for an overlay
  // never published reads and answers 404, and the object keeps no storage at all.

  /**
   * The tables, made when the first publisher connects (they stay until the object is deleted), and
   * checked by every use of them, which only comes after a publication. `replay`: the kept messages as
   * a resume sends them (`replayed: true` already in), with where each starts in the bytes ever kept;
   * `shards`: the viewers the hub believes each shard holds.
   */
  ensureSchema(): void {
    if (this.#schemaReady) return;
    this.#sql(
      'CREATE TABLE IF NOT EXISTS replay (pos INTEGER PRIMARY KEY, seq INTEGER NOT NULL, at INTEGER NOT NULL, start INTEGER NOT NULL, text TEXT NOT NULL)',
    );
    this.#sql('CREATE INDEX IF NOT EXISTS replay_start ON replay (start)');
    this.#sql('CREATE TABLE IF NOT EXISTS shards (idx INTEGER PRIMARY KEY, viewers INTEGER NOT NULL)');
    // Tables of an earlier version: its kept messages were stored as sent, and resumes from before
    // now are a gap; per-address counts now live on the shards.
    const legacy = this.#sql<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('buffer', 'ips')",
    ).toArray();
    for (const { name } of legacy) this.#sql(`DROP TABLE ${name === 'buffer' ? 'buffer' : 'ips'}`);
    if (legacy.some(({ name }) => name === 'buffer')) {
      const stream = this.stream();
      this.put<Stream>(KEY.stream, {
        pos: stream.pos,
        count: 0,
        bytes: 0,
        ...(stream.lastSeq !== undefined ? { lastSeq: stream.lastSeq, floor: stream.lastSeq } : {}),
      });
    }
    this.#schemaReady = true;
  }

  get<T>(key: string): T | undefined {
    return this.ctx.storage.kv.get<T>(key);
  }

  put<T>(key: string, value: T): void {
    this.ctx.storage.kv.put<T>(key, value);
  }

  delete(key: string): void {
    this.ctx.storage.kv.delete(key);
  }

  publication(): Publication | undefined {
    return this.get<Publication>(KEY.publication);
  }

  snapshot(): string | undefined {
    return this.get<string>(KEY.snapshot);
  }

  stream(): Stream {
    return this.get<Stream>(KEY.stream) ?? { pos: 0, count: 0, bytes: 0 };
  }

  /** A query on the hub's tables, made first if this storage has none yet (only after a publication). */
  table<T extends Row = Row>(query: string, ...bindings: unknown[]) {
    this.ensureSchema();
    return this.#sql<T>(query, ...bindings);
  }

  /** The viewers the hub believes each shard holds. */
  shardRows(): { idx: number; viewers: number }[] {
    return this.table<{ idx: number; viewers: number }>('SELECT idx, viewers FROM shards').toArray();
  }

  viewerCount(): number {
    return this.table<{ n: number | null }>('SELECT SUM(viewers) AS n FROM shards').one().n ?? 0;
  }

  /** Every publisher socket, closing ones included. */
  publisherSockets(): WebSocket[] {
    return this.ctx.getWebSockets(PUBLISHER);
  }

  /** The publisher sockets still open (one, but for a moment after a replacement or a close). */
  publishers(): WebSocket[] {
    return this.publisherSockets().filter((ws) => ws.readyState === WebSocket.OPEN);
  }

  shard(index: number): ShardStub {
    const publication = this.publication();
    const name = shardName(hubName(publication?.subdomain ?? '', publication?.overlayId ?? ''), index);
    return this.env.RELAY_SHARD.get(this.env.RELAY_SHARD.idFromName(name));
  }

  /** An RPC to a shard that may fail (it is logged): its answer, or `fallback`. */
  async ask<T>(shard: number, call: (stub: ShardStub) => Promise<T>, fallback: T): Promise<T> {
    try {
      return await call(this.shard(shard));
    } catch (err) {
      console.error(`relay: shard ${shard} did not answer:`, err);
      return fallback;
    }
  }

  #sql<T extends Row = Row>(query: string, ...bindings: unknown[]) {
    return this.ctx.storage.sql.exec<T>(query, ...bindings);
  }
}
