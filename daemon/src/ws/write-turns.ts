// When the hub's messages leave the process: at once while the daemon is quiet, gathered into one write
// per socket per turn of the event loop while it is busy.
//
// A message that finds the daemon quiet (no turn sent anything in the last QUIET_MS) goes straight to
// the socket: an alert after a lone gift does not wait for the rest of its turn (the journal, the rules,
// the 202). Every message after it in the same turn, and every message while turns keep bringing
// messages (a burst, POSTs read together, the commands a hundred rules fire), corks its socket, and all
// corked sockets are uncorked together when the turn ends, so a busy daemon makes one write per socket
// per turn instead of one per message. Order is kept: a socket is written straight only when no socket
// is corked.

/** What a turn corks: a connection's TCP socket, with the mark that says it is corked in this turn. */
export interface HeldSocket {
  corked: boolean;
  readonly socket: { cork(): void; uncork(): void };
}

/**
 * How long after a turn that sent something the daemon still counts as busy. Under load the turns that
 * send follow each other well within this; a viewer's next gift, a command after an alert or anything a
 * person does comes later than this.
 */
export const QUIET_MS = 1;

export class WriteTurns {
  #corked: HeldSocket[] = [];
  /** The end of this turn is scheduled: what is sent now is gathered. */
  #inTurn = false;
  /** When the last turn that sent something ended. */
  #lastEnd = Number.NEGATIVE_INFINITY;

  constructor(private readonly now: () => number = performance.now.bind(performance)) {}

  readonly #endTurn = (): void => {
    this.#inTurn = false;
    const corked = this.#corked;
    this.#corked = [];
    for (const held of corked) {
      held.corked = false;
      held.socket.uncork();
    }
    this.#lastEnd = this.now();
  };

  /**
   * Called before one message goes to its sockets; answers whether to gather it (`hold` each socket
   * before writing) or to write it straight. Either way the turn's end is scheduled, so what follows in
   * this turn is gathered.
   */
  gather(): boolean {
    if (this.#inTurn) return true;
    this.#inTurn = true;
    setImmediate(this.#endTurn);
    return this.now() - this.#lastEnd < QUIET_MS;
  }

  /** Corks a socket until the end of this turn (once: a socket already held stays as it is). */
  hold(held: HeldSocket): void {
    if (held.corked) return;
    held.corked = true;
    held.socket.cork();
    this.#corked.push(held);
  }
}
