// When the hub's messages leave the process: at once while the daemon is quiet, gathered into one write
// per socket per turn of the event loop while it is busy.
//
// A message that finds the daemon quiet (nothing written in this turn or the last) goes straight to the
// socket: an alert after a lone gift does not wait for the rest of its turn (the journal, the rules, the
// 202). Every message after it in the same turn, and every message while turns keep bringing messages (a
// burst, POSTs read together, the commands a hundred rules fire), corks its socket, and all corked
// sockets are uncorked together when the turn ends, so a busy daemon makes one write per socket per turn
// instead of one per message. Order is kept: a socket is written straight only when no socket is corked.

/** What a turn corks: a connection's TCP socket, with the mark that says it is corked in this turn. */
export interface HeldSocket {
  corked: boolean;
  readonly socket: { cork(): void; uncork(): void };
}

export class WriteTurns {
  #corked: HeldSocket[] = [];
  /** The end of this turn is scheduled: what is sent now is gathered. */
  #inTurn = false;
  /** Something was sent in the last turn that sent anything, and no empty turn has passed since. */
  #warm = false;
  /** Something was sent since the last end of a turn (a quiet turn between leaves `#warm` false). */
  #sentSince = false;
  #coolScheduled = false;

  readonly #endTurn = (): void => {
    this.#inTurn = false;
    const corked = this.#corked;
    this.#corked = [];
    for (const held of corked) {
      held.corked = false;
      held.socket.uncork();
    }
    this.#warm = true;
    this.#sentSince = false;
    if (!this.#coolScheduled) {
      this.#coolScheduled = true;
      setImmediate(this.#cool);
    }
  };

  /** One turn later: if that turn sent nothing, the daemon is quiet again. */
  readonly #cool = (): void => {
    this.#coolScheduled = false;
    if (!this.#sentSince) this.#warm = false;
  };

  /**
   * Called before one message goes to its sockets; answers whether to gather it (`hold` each socket
   * before writing) or to write it straight. Either way the turn's end is scheduled, so what follows in
   * this turn is gathered.
   */
  gather(): boolean {
    this.#sentSince = true;
    if (this.#inTurn) return true;
    this.#inTurn = true;
    setImmediate(this.#endTurn);
    return this.#warm;
  }

  /** Corks a socket until the end of this turn (once: a socket already held stays as it is). */
  hold(held: HeldSocket): void {
    if (held.corked) return;
    held.corked = true;
    held.socket.cork();
    this.#corked.push(held);
  }
}
