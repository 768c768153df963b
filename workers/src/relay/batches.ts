// A hub's deliveries to its shards (relay/hub.ts): frames gather for at most 50 ms and go as one batch to
// each shard that has viewers, one batch at a time per shard, so a shard gets them in order.
import { RELAY_LIMITS } from '../../../shared/protocol/index.js';
import type { HubStore } from './hub-store.js';

/**
 * Frames waiting for a shard that is still busy with the previous batch are merged into one batch; past
 * this many the shard is too far behind: its viewers are closed to reconnect and resume from the buffer.
 */
const PENDING_CAP_ENTRIES = 4096;
const PENDING_CAP_CHARS = 8 * 1024 * 1024;

/** One frame on its way to the viewers: its place in the hub's order and its text, verbatim. */
export interface RelayEntry {
  pos: number;
  text: string;
}

/** One shard's deliveries: one batch at a time; what comes meanwhile waits as one merged batch. */
interface Outbox {
  pending: RelayEntry[];
  chars: number;
  /** Frames were dropped for this shard: its viewers reconnect once the batch under way is done. */
  behind: boolean;
}

export class ShardBatches {
  /** Entries not yet sent to the shards, and the batch timer (at most one batch per 50 ms). */
  #pending: RelayEntry[] = [];
  #batchTimer: ReturnType<typeof setTimeout> | undefined;
  #lastBatchAt = 0;
  /** The shards with a delivery under way, each with what waits for it, so a shard gets batches in order. */
  readonly #outboxes = new Map<number, Outbox>();

  constructor(readonly store: HubStore) {}

  /** Sends the entry with the next batch (at most one batch per 50 ms). */
  push(entry: RelayEntry): void {
    this.#pending.push(entry);
    if (this.#batchTimer === undefined) {
      const wait = Math.max(0, this.#lastBatchAt + RELAY_LIMITS.batchMs - Date.now());
      this.#batchTimer = setTimeout(() => this.#sendBatch(), wait);
    }
  }

  /** Drops what waits for the shards (the publication ended). */
  clear(): void {
    this.#pending = [];
    this.#outboxes.clear();
  }

  /** One batch to each shard that has viewers: at once, or merged into what waits for a busy shard. */
  #sendBatch(): void {
    this.#batchTimer = undefined;
    this.#lastBatchAt = Date.now();
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 0) return;
    const chars = batch.reduce((n, entry) => n + entry.text.length, 0);
    for (const { idx } of this.store.shardRows()) {
      const outbox = this.#outboxes.get(idx);
      if (!outbox) {
        this.#outboxes.set(idx, { pending: [], chars: 0, behind: false });
        void this.#deliver(idx, batch);
      } else if (
        outbox.behind ||
        outbox.pending.length + batch.length > PENDING_CAP_ENTRIES ||
        outbox.chars + chars > PENDING_CAP_CHARS
      ) {
        outbox.pending = [];
        outbox.chars = 0;
        outbox.behind = true;
      } else {
        for (const entry of batch) outbox.pending.push(entry);
        outbox.chars += chars;
      }
    }
  }

  /** Sends a batch to a shard, then what gathered for it meanwhile, as one batch, until nothing waits. */
  async #deliver(idx: number, first: RelayEntry[]): Promise<void> {
    let batch = first;
    for (;;) {
      await this.store.ask(idx, (shard) => shard.deliver(batch), undefined);
      const outbox = this.#outboxes.get(idx);
      if (!outbox) return; // forgotten meanwhile
      if (outbox.behind) {
        // Frames were dropped for this shard: its viewers reconnect and resume from the kept messages.
        this.#outboxes.delete(idx);
        await this.store.ask(
          idx,
          (shard) => shard.closeAll(1011, 'the relay fell behind; reconnect'),
          undefined,
        );
        return;
      }
      if (outbox.pending.length === 0) {
        this.#outboxes.delete(idx);
        return;
      }
      batch = outbox.pending;
      outbox.pending = [];
      outbox.chars = 0;
    }
  }
}
