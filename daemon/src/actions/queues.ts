// Named queues: the actions with the same `queue` run one at a time, in arrival order, across rules.
// An action that left something behind (an OBS change with `revertAfterMs`) holds its queue until that
// ended, so the next one starts from the state it put back.
import type { QueueState } from '../../../shared/protocol/index.js';
import type { Executed } from './kinds/types.js';

/** Actions one queue holds waiting; past that the oldest waiting is dropped. */
export const MAX_WAITING = 100;

interface Job {
  run: () => Promise<void>;
  done: () => void;
}

interface Queue {
  running: Job | undefined;
  waiting: Job[];
}

interface QueuesOptions {
  /** A job failed outside an action's own handling: the runner logs it and goes on. */
  failed: (err: unknown) => void;
}

export class Queues {
  readonly #options: QueuesOptions;
  readonly #queues = new Map<string, Queue>();
  #closed = false;

  constructor(options: QueuesOptions) {
    this.#options = options;
  }

  /**
   * Runs `run` when the queue gets to it; resolves when it ran and what it left behind ended, or it was
   * skipped, dropped or cleared. `dropped` hears of each action dropped because the queue was full.
   */
  enqueue(
    name: string,
    run: () => Promise<Executed | undefined>,
    dropped: (message: string) => void,
  ): Promise<void> {
    return new Promise<void>((resolve) => {
      let queue = this.#queues.get(name);
      if (!queue) {
        queue = { running: undefined, waiting: [] };
        this.#queues.set(name, queue);
      }
      queue.waiting.push({
        run: async () => {
          const executed = await run();
          if (executed) await executed.ended;
        },
        done: resolve,
      });
      while (queue.waiting.length > MAX_WAITING) {
        // The oldest waiting is dropped: a flood cannot grow a queue without bound.
        queue.waiting.shift()?.done();
        dropped(`dropped: queue "${name}" had more than ${MAX_WAITING} waiting`);
      }
      this.#next(name);
    });
  }

  #next(name: string): void {
    const queue = this.#queues.get(name);
    if (!queue || queue.running || this.#closed) return;
    const job = queue.waiting.shift();
    if (!job) {
      this.#queues.delete(name);
      return;
    }
    queue.running = job;
    job
      .run()
      .catch((err: unknown) => this.#options.failed(err))
      .finally(() => {
        job.done();
        if (queue.running === job) {
          queue.running = undefined;
          this.#next(name);
        }
      });
  }

  /** The queue moves on to its next action without waiting for the one running (which still ends). */
  skip(name: string): QueueState | undefined {
    const queue = this.#queues.get(name);
    if (!queue) return undefined;
    const running = queue.running;
    queue.running = undefined;
    running?.done();
    this.#next(name);
    return this.#state(name);
  }

  /** Drops every action waiting in the queue. */
  clear(name: string): QueueState | undefined {
    const queue = this.#queues.get(name);
    if (!queue) return undefined;
    for (const job of queue.waiting.splice(0)) job.done();
    return this.#state(name);
  }

  #state(name: string): QueueState {
    const queue = this.#queues.get(name);
    return { name, running: queue?.running !== undefined, waiting: queue?.waiting.length ?? 0 };
  }

  list(): QueueState[] {
    return [...this.#queues.keys()].map((name) => this.#state(name));
  }

  /** Shutdown: nothing more starts, and every action waiting is let go. */
  close(): void {
    this.#closed = true;
    for (const queue of this.#queues.values()) for (const job of queue.waiting.splice(0)) job.done();
  }
}
