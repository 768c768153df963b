// The action log: the last 200 outcomes for the dashboard, a line in the daemon's log for failures
// (at most one per action every 10 s), and the outcomes told to whoever waits for them.
import type { ActionLogEntry } from '../../../shared/protocol/index.js';
import type { FiredAction } from '../rules/engine.js';

const LOG_SIZE = 200;
const FAILURE_LINE_EVERY_MS = 10_000;
/** Actions whose last failure line is remembered, for the 10 s quiet. */
const QUIET_KEPT = 1000;

/** An outcome as the log keeps it: the time as a number until someone reads it. */
type Outcome = Omit<ActionLogEntry, 'at'> & { at: number };

export type OutcomeObserver = (action: FiredAction, entry: ActionLogEntry) => void;

export class ActionLog {
  readonly #line: ((line: string) => void) | undefined;
  /** The last 200 outcomes, newest last; `at` is formatted when the log is read. */
  readonly #outcomes: Outcome[] = [];
  /** When each rule's action last wrote a failure line, and how many it kept quiet since. */
  readonly #quiet = new Map<string, { at: number; suppressed: number }>();
  /** Told of every outcome (a rule's test waits for its own). */
  readonly #observers = new Set<OutcomeObserver>();

  /** `line` writes to the daemon's log. */
  constructor(line?: (line: string) => void) {
    this.#line = line;
  }

  /** The outcome of `action`, begun at `started`: done, failed with `error`, or `skipped` (not a failure). */
  add(action: FiredAction, started: number, error: string | undefined, skipped?: string): void {
    const now = Date.now();
    const outcome: Outcome = {
      at: now,
      ruleId: action.ruleId,
      ruleName: action.ruleName,
      action: action.index,
      kind: action.kind,
      ok: error === undefined,
      ms: Math.max(0, now - started),
      ...(error !== undefined ? { error } : {}),
      ...(skipped !== undefined && error === undefined ? { skipped } : {}),
    };
    this.#outcomes.push(outcome);
    if (this.#outcomes.length > LOG_SIZE * 2) this.#outcomes.splice(0, this.#outcomes.length - LOG_SIZE);
    if (this.#observers.size > 0) {
      const entry = logEntry(outcome);
      for (const observer of this.#observers) observer(action, entry);
    }
    if (error !== undefined) this.#failureLine(action, error, now);
  }

  /** The last 200 outcomes, newest last. */
  entries(): ActionLogEntry[] {
    return this.#outcomes.slice(-LOG_SIZE).map(logEntry);
  }

  /** Tells `observer` of every outcome from now on, until the function returned is called. */
  observe(observer: OutcomeObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /**
   * One line per failing action at most every 10 s, with how many more failed meanwhile: a flood of
   * gifts against a tool that is down says so, without a line per gift.
   */
  #failureLine(action: FiredAction, error: string, now: number): void {
    const log = this.#line;
    if (!log) return;
    const key = `${action.ruleId}\u0000${action.index}`;
    const quiet = this.#quiet.get(key);
    if (quiet && now - quiet.at < FAILURE_LINE_EVERY_MS) {
      quiet.suppressed++;
      return;
    }
    const more = quiet?.suppressed ? ` (${quiet.suppressed} more failed since the last line)` : '';
    this.#quiet.set(key, { at: now, suppressed: 0 });
    if (this.#quiet.size > QUIET_KEPT) this.#quiet.delete(this.#quiet.keys().next().value ?? key);
    log(
      `[actions] rule "${action.ruleName}" action ${action.index + 1} (${action.kind}) failed: ${error}${more}`,
    );
  }
}

function logEntry(outcome: Outcome): ActionLogEntry {
  return { ...outcome, at: new Date(outcome.at).toISOString() };
}
