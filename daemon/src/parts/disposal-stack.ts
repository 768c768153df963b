// The daemon's one shutdown order: each part pushes its close() as it starts, and closeAll() runs them
// in reverse, so shutdown is start in reverse. A close that fails is logged and the others still run.
import { errorMessage } from '../errors.js';

export type Close = () => void | Promise<void>;

export class DisposalStack {
  readonly #closes: { close: Close; what: string }[] = [];
  #closing: Promise<void> | undefined;

  constructor(private readonly log: (line: string) => void) {}

  /** Adds what undoes a part that just started; `what` names it in the log should it fail. */
  push(close: Close, what = 'a part'): void {
    this.#closes.push({ close, what });
  }

  /** Runs every close, last pushed first; a second call waits for the first. */
  closeAll(): Promise<void> {
    this.#closing ??= (async () => {
      for (let entry = this.#closes.pop(); entry; entry = this.#closes.pop()) {
        try {
          await entry.close();
        } catch (err) {
          this.log(`[daemon] closing ${entry.what} failed: ${errorMessage(err)}`);
        }
      }
    })();
    return this.#closing;
  }
}

/**
 * Starts a part with its own stack: should it fail half-way, what it started so far is closed and the
 * error goes on; else its closes run in reverse as one close().
 */
export async function startPart<T>(
  log: (line: string) => void,
  start: (stack: DisposalStack) => Promise<T> | T,
): Promise<T & { close(): Promise<void> }> {
  const stack = new DisposalStack(log);
  try {
    const offers = await start(stack);
    return Object.assign(offers as T & object, { close: () => stack.closeAll() }) as T & {
      close(): Promise<void>;
    };
  } catch (err) {
    await stack.closeAll();
    throw err;
  }
}
