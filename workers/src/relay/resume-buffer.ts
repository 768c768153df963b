// A hub's kept messages (relay/hub.ts), for viewers who resume: the last 500, or the last 5 minutes,
// whichever holds more, in the hub's `replay` table as a resume sends them, so a join reads stored text
// and parses nothing.
import { RELAY_LIMITS } from '../../../shared/protocol/index.js';
import { type HubStore, KEY, type Stream } from './hub-store.js';

/** Past the 500 messages kept whatever their age, the window of 5 minutes is bounded too (storage). */
const BUFFER_CAP_MESSAGES = 20_000;
const BUFFER_CAP_BYTES = 64 * 1024 * 1024;
/**
 * A resume replays at most this much (the newest kept messages; the rest is a gap), so a join costs the
 * hub the same bounded work whatever `resumeFrom` says.
 */
export const REPLAY_CAP_BYTES = 2 * 1024 * 1024;

export class ResumeBuffer {
  constructor(readonly store: HubStore) {}

  /** Keeps a numbered message at `pos` of the stream (which the caller stores). */
  keep(stream: Stream, pos: number, seq: number, text: string): void {
    const now = Date.now();
    const start = stream.total ?? 0;
    this.store.table(
      'INSERT INTO replay (pos, seq, at, start, text) VALUES (?, ?, ?, ?, ?)',
      pos,
      seq,
      now,
      start,
      text,
    );
    stream.total = start + text.length;
    stream.lastSeq = Math.max(seq, stream.lastSeq ?? seq);
    // After a first publish the relay starts from the snapshot: what came before the first message is not kept.
    stream.floor ??= seq - 1;
    stream.count += 1;
    stream.bytes += text.length;
    while (stream.count > RELAY_LIMITS.bufferMessages) {
      const oldest = this.store
        .table<{ pos: number; seq: number; at: number; len: number }>(
          'SELECT pos, seq, at, length(text) AS len FROM replay ORDER BY pos LIMIT 1',
        )
        .toArray()[0];
      if (!oldest) break;
      const beyond = stream.count > BUFFER_CAP_MESSAGES || stream.bytes > BUFFER_CAP_BYTES;
      if (!beyond && oldest.at >= now - RELAY_LIMITS.bufferMs) break;
      this.store.table('DELETE FROM replay WHERE pos = ?', oldest.pos);
      stream.floor = Math.max(stream.floor, oldest.seq);
      stream.count -= 1;
      stream.bytes -= oldest.len;
    }
  }

  /**
   * What a viewer resuming after `resumeFrom` missed, then `resumed`. Bounded work whatever `resumeFrom`
   * says: at most REPLAY_CAP_BYTES of stored text, found through the index and sent as stored.
   */
  replay(resumeFrom: number): string[] {
    this.store.ensureSchema(); // before the stream is read: a storage of the previous version changes it
    const { lastSeq, floor, total = 0 } = this.store.stream();
    // The oldest kept message from which on the rest fits in the replay's bytes.
    const from = this.store
      .table<{ pos: number }>(
        'SELECT pos FROM replay WHERE start >= ? ORDER BY start LIMIT 1',
        total - REPLAY_CAP_BYTES,
      )
      .toArray()[0]?.pos;
    const rows =
      from === undefined
        ? []
        : this.store
            .table<{ text: string }>(
              'SELECT text FROM replay WHERE pos >= ? AND seq > ? ORDER BY pos',
              from,
              resumeFrom,
            )
            .toArray();
    const frames = rows.map(({ text }) => text);
    // Kept, wanted, but past the replay's bytes: the message just before the replay is after resumeFrom.
    const below = this.store
      .table<{ seq: number }>(
        'SELECT seq FROM replay WHERE pos < ? ORDER BY pos DESC LIMIT 1',
        from ?? Number.MAX_SAFE_INTEGER,
      )
      .toArray()[0];
    const cut = below !== undefined && below.seq > resumeFrom;
    // As the daemon's own page protocol: a gap when the page comes from before what is kept, or from
    // numbers above every one relayed (another history); here also when the replay was cut to its bytes.
    const gap =
      cut || lastSeq === undefined || resumeFrom > lastSeq || floor === undefined || resumeFrom < floor;
    frames.push(
      JSON.stringify({
        type: 'resumed',
        from: resumeFrom,
        to: Math.max(resumeFrom, lastSeq ?? resumeFrom),
        replayed: rows.length,
        gap,
      }),
    );
    return frames;
  }

  /** Forgets every kept message; the stream's position goes on, so a shard never sees one twice. */
  clear(): void {
    this.store.table('DELETE FROM replay');
    const { pos, total } = this.store.stream();
    this.store.put<Stream>(KEY.stream, { pos, count: 0, bytes: 0, ...(total ? { total } : {}) });
  }
}
