// When the hub's messages leave the process: at once unless messages come faster than the daemon drains
// them, gathered into one write per socket per turn of the event loop while they do.
//
// The first message of a turn goes straight to its sockets, unless the daemon is in a burst: the last turn
// that sent something had to gather (it sent more than one message), and the event loop has not waited for
// work for QUIET_MS since. So a lone gift after any pause (a viewer's next gift, the next of a paced series
// posted as soon as the last arrived, a command after an alert) leaves at once, without waiting for the rest
// of its turn (the journal, the rules, the 202). Every message after the first in the same turn, and every
// message of the turns of a burst (POSTs read together, the commands a hundred rules fire, however long
// their work takes), corks its socket, and all corked sockets are uncorked together when the turn ends, so a
// busy daemon makes one write per socket per turn instead of one per message. Order is kept: a socket is
// written straight only when no socket is corked.

/** What a turn corks: a connection's TCP socket, with the mark that says it is corked in this turn. */
export interface HeldSocket {
  corked: boolean;
  readonly socket: { cork(): void; uncork(): void };
}

/**
 * How long the event loop must have waited for work since the last turn that sent something for a burst
 * to count as over. Within a burst it hardly waits between turns; before a viewer's next gift, a command
 * after an alert or anything a person does, it waits longer than this.
 */
export const QUIET_MS = 1;

/** The time the event loop has spent waiting for work since it started, in ms. */
const loopIdleMs = (): number => performance.eventLoopUtilization().idle;

export class WriteTurns {
  #corked: HeldSocket[] = [];
  /** The end of this turn is scheduled: what is sent now is gathered. */
  #inTurn = false;
  /** The loop's waiting time when the last turn that sent something ended. */
  #idleAtLastEnd = Number.NEGATIVE_INFINITY;
  /** The last turn that sent something gathered some of it: a burst is under way. */
  #inBurst = false;

  /** `idleMs`: how long the event loop has waited for work so far (a counter in tests). */
  constructor(private readonly idleMs: () => number = loopIdleMs) {}

  readonly #endTurn = (): void => {
    this.#inTurn = false;
    const corked = this.#corked;
    this.#corked = [];
    this.#inBurst = corked.length > 0;
    for (const held of corked) {
      held.corked = false;
      held.socket.uncork();
    }
    this.#idleAtLastEnd = this.idleMs();
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
    return this.#inBurst && this.idleMs() - this.#idleAtLastEnd < QUIET_MS;
  }

  /** Corks a socket until the end of this turn (once: a socket already held stays as it is). */
  hold(held: HeldSocket): void {
    if (held.corked) return;
    held.corked = true;
    held.socket.cork();
    this.#corked.push(held);
  }
}
