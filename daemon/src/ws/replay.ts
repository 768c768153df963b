// What the hub keeps to resume a page: the recent `stream-event`s (every overlay gets
// them) and each overlay's recent `overlay-command`s, each with its `seq` and time. A page that comes
// back with `resumeFrom` gets what it missed from here, in `seq` order. With the journal, it starts from
// what the journal kept (the newest events, the commands of the last hour) and keeps each command there,
// so a page resuming after a restart gets what it missed too.
import type { OverlayCommandInput, StreamEvent } from '../../../shared/protocol/index.js';
import type { KeptForReplay } from '../journal/journal.js';

/** Kept at least this long… */
const WINDOW_MS = 5 * 60 * 1000;
/** …and at least this many (per ring); past the cap the oldest go whatever their age. */
const MIN_KEPT = 500;
const EVENTS_CAP = 20_000;
const COMMANDS_CAP = 5_000;

/** Where kept messages outlive the daemon (the journal). */
export interface ReplayStore {
  keptForReplay(limit: number): KeptForReplay;
  recordCommand(overlayId: string, seq: number, at: number, command: OverlayCommandInput): void;
  forgetCommands(overlayId: string): void;
}

export type ReplayEntry =
  | { seq: number; at: number; kind: 'event'; event: StreamEvent }
  | { seq: number; at: number; kind: 'command'; command: OverlayCommandInput };

/** Entries in `seq` order; the oldest leave once they are both older than the window and beyond the minimum. */
class Ring {
  readonly #entries: ReplayEntry[] = [];
  #head = 0;
  /** The highest `seq` no longer kept. */
  prunedUpTo: number;

  constructor(
    readonly cap: number,
    prunedUpTo: number,
  ) {
    this.prunedUpTo = prunedUpTo;
  }

  get size(): number {
    return this.#entries.length - this.#head;
  }

  push(entry: ReplayEntry, now: number): void {
    this.#entries.push(entry);
    while (
      this.size > this.cap ||
      (this.size > MIN_KEPT && (this.#entries[this.#head]?.at ?? now) < now - WINDOW_MS)
    ) {
      this.prunedUpTo = this.#entries[this.#head]?.seq ?? this.prunedUpTo;
      this.#head++;
    }
    // Compact now and then rather than shift on every push.
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries.splice(0, this.#head);
      this.#head = 0;
    }
  }

  /** Entries with a `seq` above `from`, oldest first. */
  after(from: number): ReplayEntry[] {
    let lo = this.#head;
    let hi = this.#entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#entries[mid]?.seq ?? 0) <= from) lo = mid + 1;
      else hi = mid;
    }
    return this.#entries.slice(lo);
  }
}

export class ReplayLog {
  readonly #events: Ring;
  readonly #commands = new Map<string, Ring>();
  /** The highest `seq` of a command no longer kept, for an overlay without commands kept. */
  readonly #commandsPrunedUpTo: number;
  readonly #store: ReplayStore | undefined;
  /** The highest `seq` handed out (or skipped): a page resuming from above it knows another history. */
  #highest: number;

  /**
   * `firstSeq`: the first number this daemon hands out. Without a store, a resume from before it cannot
   * be complete; with one, what the store kept is replayed as well.
   */
  constructor(firstSeq: number, store?: ReplayStore) {
    this.#store = store;
    this.#highest = firstSeq - 1;
    const now = Date.now();
    const kept = store?.keptForReplay(EVENTS_CAP);
    this.#commandsPrunedUpTo = kept ? kept.commandsPrunedUpTo : firstSeq - 1;
    this.#events = new Ring(EVENTS_CAP, kept ? kept.eventsPrunedUpTo : firstSeq - 1);
    if (!kept) return;
    // Kept as if they had happened in this run: the window and the minimum trim them the same way.
    for (const e of kept.events)
      this.#events.push({ seq: e.seq, at: e.at, kind: 'event', event: e.event }, now);
    for (const c of kept.commands)
      this.#ring(c.overlayId).push({ seq: c.seq, at: c.at, kind: 'command', command: c.command }, now);
  }

  #ring(overlayId: string): Ring {
    let ring = this.#commands.get(overlayId);
    if (!ring) {
      ring = new Ring(COMMANDS_CAP, this.#commandsPrunedUpTo);
      this.#commands.set(overlayId, ring);
    }
    return ring;
  }

  recordEvent(seq: number, at: number, event: StreamEvent): void {
    this.#highest = Math.max(this.#highest, seq);
    this.#events.push({ seq, at, kind: 'event', event }, at);
  }

  recordCommand(overlayId: string, seq: number, at: number, command: OverlayCommandInput): void {
    this.#highest = Math.max(this.#highest, seq);
    this.#ring(overlayId).push({ seq, at, kind: 'command', command }, at);
    this.#store?.recordCommand(overlayId, seq, at, command);
  }

  /** What an overlay's page missed after `from`, in `seq` order, and whether some of it is no longer kept. */
  since(overlayId: string, from: number): { entries: ReplayEntry[]; gap: boolean } {
    const events = this.#events.after(from);
    const ring = this.#commands.get(overlayId);
    const commands = ring?.after(from) ?? [];
    // From above every number handed out: the page saw numbers of another journal (one moved aside, a
    // restored backup), so what it missed cannot be told.
    const gap =
      from > this.#highest ||
      from < this.#events.prunedUpTo ||
      from < (ring?.prunedUpTo ?? this.#commandsPrunedUpTo);
    if (commands.length === 0) return { entries: events, gap };
    if (events.length === 0) return { entries: commands, gap };
    // Two sorted lists into one.
    const entries: ReplayEntry[] = [];
    let i = 0;
    let j = 0;
    while (i < events.length || j < commands.length) {
      const e = events[i];
      const c = commands[j];
      if (c === undefined || (e !== undefined && e.seq < c.seq)) {
        if (e) entries.push(e);
        i++;
      } else {
        entries.push(c);
        j++;
      }
    }
    return { entries, gap };
  }

  /** An overlay that no longer exists keeps nothing. */
  forget(overlayId: string): void {
    this.#commands.delete(overlayId);
    this.#store?.forgetCommands(overlayId);
  }
}
