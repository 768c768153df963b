// Runs the actions of fired rules: in order within a rule, `delayMs` waited first, named queues one at a
// time across rules (queues.ts), each action by the executor of its kind (kinds/), and every outcome in the
// action log (action-log.ts). An overlay command that nothing waits for goes out at once, in the event's
// turn; nothing else ever holds up event delivery, and no error in an action or a chain ends the daemon.
import type { ActionLogEntry, ChatPreview, QueueState } from '../../../shared/protocol/index.js';
import { errorMessage } from '../errors.js';
import type { FiredAction } from '../rules/engine.js';
import { systemTimers, type TimerHandle, type Timers } from '../timers.js';
import { ActionLog } from './action-log.js';
import { previewChat } from './kinds/chat.js';
import {
  type ActionServices,
  ActionSkipped,
  type Executed,
  type Executors,
  execute,
  makeExecutors,
} from './kinds/index.js';
import type { ActionOf } from './kinds/types.js';
import { OutboundCalls } from './outbound.js';
import { Queues } from './queues.js';

interface ActionRunnerOptions {
  sendCommand: ActionServices['sendCommand'];
  /** OBS for `obs` actions; without it they fail, saying OBS is not set up. */
  obs?: ActionServices['obs'];
  /** Where Streamer.bot's HTTP server listens (settings). */
  streamerbotUrl?: () => string;
  /** The speech engine and its settings for `speak` actions; without them they fail, saying so. */
  speech?: ActionServices['speech'];
  tts?: ActionServices['tts'];
  /** The platforms' chat senders and send queues for `chat` actions; without them they are skipped. */
  chat?: ActionServices['chat'];
  log?: (line: string) => void;
  now?: () => number;
  /** Waits, reverts and request timeouts run on it (a fake clock in tests). */
  timers?: Timers;
}

export class ActionRunner {
  readonly #options: ActionRunnerOptions;
  readonly #log: ActionLog;
  readonly #queues: Queues;
  readonly #calls: OutboundCalls;
  readonly #executors: Executors;
  readonly #clock: Timers;
  /** Waits under way (delays, reverts), so `close` ends them. */
  readonly #timers = new Set<TimerHandle>();
  /** Waits a queue may hold on (a revert): `close` lets them go. */
  readonly #ends = new Set<() => void>();
  #closed = false;

  constructor(options: ActionRunnerOptions) {
    this.#options = options;
    this.#clock = options.timers ?? systemTimers();
    this.#log = new ActionLog(options.log);
    this.#queues = new Queues({ failed: (err) => this.#chainFailed(undefined, err) });
    this.#calls = new OutboundCalls(this.#clock);
    this.#executors = makeExecutors({
      sendCommand: options.sendCommand,
      obs: options.obs,
      speech: options.speech,
      tts: options.tts,
      streamerbotUrl: options.streamerbotUrl,
      chat: options.chat,
      log: options.log,
      now: () => options.now?.() ?? Date.now(),
      wait: (ms) => this.#wait(ms),
      closed: () => this.#closed,
      refusal: (origin) => this.#calls.refusal(origin),
      request: (url, init) => this.#calls.request(url, init),
    });
  }

  /** Starts the actions of one event's fired rules; returns at once and never throws. */
  run(actions: readonly FiredAction[]): void {
    if (actions.length === 0) return; // most events fire no rule
    const byRule = new Map<string, FiredAction[]>();
    for (const action of actions) {
      const list = byRule.get(action.ruleId);
      if (list) list.push(action);
      else byRule.set(action.ruleId, [action]);
    }
    for (const list of byRule.values()) {
      try {
        this.#runRule(list);
      } catch (err) {
        this.#chainFailed(list[0], err);
      }
    }
  }

  /**
   * The last word on a chain of actions that failed outside an action's own handling: one line naming
   * the rule (and the action when known), and the daemon goes on.
   */
  #chainFailed(action: FiredAction | undefined, err: unknown): void {
    const what = action ? `rule "${action.ruleName}" action ${action.index + 1} (${action.kind})` : 'a rule';
    this.#options.log?.(`[actions] ${what} failed: ${errorMessage(err)}`);
  }

  /**
   * Runs one rule's actions (the dashboard's "test this rule") and resolves with their outcomes, in the
   * order they finished, once all have one or `timeoutMs` has passed (then with those that have).
   */
  test(actions: readonly FiredAction[], timeoutMs: number): Promise<ActionLogEntry[]> {
    const mine = new Set(actions);
    const outcomes: ActionLogEntry[] = [];
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        stop();
        resolve(outcomes);
      };
      const timer = setTimeout(finish, timeoutMs);
      const stop = this.#log.observe((action, entry) => {
        if (!mine.has(action)) return;
        outcomes.push(entry);
        if (outcomes.length === actions.length) finish();
      });
      if (actions.length === 0) finish();
      else this.run(actions);
    });
  }

  #runRule(actions: FiredAction[]): void {
    let i = 0;
    // The overlay commands at the head of the rule that wait for nothing go out now, in order.
    for (; i < actions.length; i++) {
      const action = actions[i];
      if (action?.kind !== 'overlay' || action.delayMs || action.queue) break;
      const started = Date.now();
      try {
        execute(this.#executors, action);
        this.#log.add(action, started, undefined);
      } catch (err) {
        this.#log.add(action, started, errorMessage(err));
      }
    }
    const rest = actions.slice(i);
    if (rest.length === 0) return;
    let current: FiredAction | undefined = rest[0];
    (async () => {
      for (const action of rest) {
        current = action;
        if (this.#closed) return;
        if (action.delayMs) await this.#wait(action.delayMs);
        if (this.#closed) return;
        if (action.queue)
          await this.#queues.enqueue(
            action.queue,
            () => this.#execute(action),
            (dropped) => this.#log.add(action, Date.now(), dropped),
          );
        else await this.#execute(action);
      }
    })().catch((err: unknown) => this.#chainFailed(current, err));
  }

  /**
   * One action by the executor of its kind, its outcome in the log whatever happens. Resolves with what
   * it left behind (an OBS change to revert), which a queue waits for. An outcome known only later (a
   * chat message waiting for its platform) is logged when it settles, and nothing waits for it.
   */
  async #execute(action: FiredAction): Promise<Executed | undefined> {
    const started = Date.now();
    try {
      let executed = execute(this.#executors, action);
      if (executed instanceof Promise) executed = await executed;
      else if (executed && 'refused' in executed) {
        this.#log.add(action, started, executed.refused);
        return undefined;
      }
      if (executed?.outcome)
        executed.outcome.then(
          () => this.#log.add(action, started, undefined),
          (err: unknown) => this.#failed(action, started, err),
        );
      else this.#log.add(action, started, undefined);
      return executed;
    } catch (err) {
      this.#failed(action, started, err);
      return undefined;
    }
  }

  /** An action that threw: skipped (`ok: true`, in words) or failed. */
  #failed(action: FiredAction, started: number, err: unknown): void {
    if (err instanceof ActionSkipped) this.#log.add(action, started, undefined, err.message);
    else this.#log.add(action, started, errorMessage(err));
  }

  /** What a `chat` action would send, for a rule test (which sends none). */
  previewChat(action: ActionOf<'chat'>): ChatPreview[] {
    return previewChat(action, this.#options.chat?.senders);
  }

  /** The queue moves on to its next action without waiting for the one running (which still ends). */
  skip(name: string): QueueState | undefined {
    return this.#queues.skip(name);
  }

  /** Drops every action waiting in the queue. */
  clear(name: string): QueueState | undefined {
    return this.#queues.clear(name);
  }

  queues(): QueueState[] {
    return this.#queues.list();
  }

  /** The last 200 outcomes, newest last. */
  log(): ActionLogEntry[] {
    return this.#log.entries();
  }

  /** Resolves with true after `ms`, or with false at once when the runner closes. */
  #wait(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const end = () => resolve(false);
      const timer = this.#clock.setTimeout(() => {
        this.#timers.delete(timer);
        this.#ends.delete(end);
        resolve(true);
      }, ms);
      this.#timers.add(timer);
      this.#ends.add(end);
    });
  }

  /** Shutdown: waits and requests end now; nothing more starts. */
  close(): void {
    this.#closed = true;
    for (const timer of this.#timers) this.#clock.clearTimeout(timer);
    this.#timers.clear();
    for (const end of this.#ends) end();
    this.#ends.clear();
    this.#calls.close();
    this.#queues.close();
  }
}
