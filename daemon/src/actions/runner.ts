// Runs the actions of fired rules: in order within a rule, `delayMs` waited first,
// named queues one at a time across rules, and every outcome in the action log. An overlay command that
// nothing waits for goes out at once, in the event's turn; nothing else ever holds up event delivery.
import type { ActionLogEntry, OverlayCommandInput, QueueState } from '../../../shared/protocol/index.js';
import type { StoredSettings } from '../../../shared/settings.js';
import { errorMessage } from '../errors.js';
import type { FiredAction } from '../rules/engine.js';
import { systemTimers, type TimerHandle, type Timers } from '../timers.js';
import type { ObsConnection } from './obs.js';
import type { Speech } from './speech.js';
import { blockedWord, speechText } from './speech-text.js';

/** The default for Streamer.bot's HTTP server. */
const DEFAULT_STREAMERBOT_URL = 'http://127.0.0.1:7474';
const WEBHOOK_TIMEOUT_MS = 5000;
const LOG_SIZE = 200;
const FAILURE_LINE_EVERY_MS = 10_000;
/**
 * Unanswered requests one address may hold at once. Past that an action fails at once rather than open
 * another socket: a tool that stopped answering cannot make a gift flood pile up thousands of them.
 */
const MAX_UNANSWERED_PER_ORIGIN = 32;
const MAX_WAITING = 100;

interface ActionRunnerOptions {
  sendCommand: (overlayId: string, command: OverlayCommandInput) => void;
  /** OBS for `obs` actions; without it they fail, saying OBS is not set up. */
  obs?: ObsConnection;
  /** Where Streamer.bot's HTTP server listens (settings). */
  streamerbotUrl?: () => string;
  /** The speech engine and its settings for `speak` actions; without them they fail, saying so. */
  speech?: Speech;
  tts?: () => StoredSettings['tts'];
  log?: (line: string) => void;
  now?: () => number;
  /** Waits, reverts and request timeouts run on it (a fake clock in tests). */
  timers?: Timers;
}

interface Job {
  run: () => Promise<void>;
  done: () => void;
}

interface Queue {
  running: Job | undefined;
  waiting: Job[];
}

export class ActionRunner {
  readonly #options: ActionRunnerOptions;
  /** The last 200 outcomes, newest last; `at` is formatted when the log is read. */
  readonly #log: Outcome[] = [];
  /** When each rule's action last wrote a failure line, and how many it kept quiet since. */
  readonly #quiet = new Map<string, { at: number; suppressed: number }>();
  readonly #queues = new Map<string, Queue>();
  /** Waits and requests under way, so `close` ends them. */
  readonly #clock: Timers;
  readonly #timers = new Set<TimerHandle>();
  /** Reverts waited for (a queue holds until its action was reverted): `close` lets them go. */
  readonly #ends = new Set<() => void>();
  readonly #requests = new Set<AbortController>();
  /** Requests under way per origin (scheme, host and port). */
  readonly #unanswered = new Map<string, number>();
  /** Told of every outcome (a rule's test waits for its own). */
  readonly #observers = new Set<(action: FiredAction, entry: ActionLogEntry) => void>();
  /** When each viewer last had something spoken (lowercased uniqueId), for `tts.userCooldownMs`. */
  readonly #spokeAt = new Map<string, number>();
  /**
   * OBS states under a temporary change (`revertAfterMs`), by what they belong to (the program scene,
   * a scene item, an input, a filter): the state before the first of them and how many reverts are
   * still due. Only the last revert puts the state back, and it puts back that first state, never a
   * state that was itself temporary.
   */
  readonly #temporary = new Map<string, { base: unknown; pending: number }>();
  #closed = false;

  constructor(options: ActionRunnerOptions) {
    this.#options = options;
    this.#clock = options.timers ?? systemTimers();
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
        this.#observers.delete(observer);
        resolve(outcomes);
      };
      const observer = (action: FiredAction, entry: ActionLogEntry) => {
        if (!mine.has(action)) return;
        outcomes.push(entry);
        if (outcomes.length === actions.length) finish();
      };
      const timer = setTimeout(finish, timeoutMs);
      this.#observers.add(observer);
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
      this.#record(action, Date.now(), () => this.#overlay(action));
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
        const execute = () => this.#execute(action);
        if (action.queue) await this.#enqueue(action.queue, action, execute);
        else await execute();
      }
    })().catch((err: unknown) => this.#chainFailed(current, err));
  }

  /**
   * One action, its outcome in the log whatever happens. With a queue, an OBS change with
   * `revertAfterMs` holds the queue until it was reverted, so the next one starts from the state
   * it put back.
   */
  async #execute(action: FiredAction): Promise<void> {
    const started = Date.now();
    let reverting: Reverting | undefined;
    try {
      const refused = this.#refuseCall(action);
      if (refused !== undefined) return this.#entry(action, started, refused);
      if (action.kind === 'overlay') this.#overlay(action);
      else if (action.kind === 'webhook') await this.#webhook(action);
      else if (action.kind === 'obs') reverting = await this.#obsRequest(action);
      else if (action.kind === 'speak') await this.#speak(action);
      else await this.#streamerbot(action);
      this.#entry(action, started, undefined);
    } catch (err) {
      this.#entry(action, started, errorMessage(err));
    }
    if (reverting && action.queue) await reverting.reverted;
  }

  #record(action: FiredAction, started: number, run: () => void): void {
    try {
      run();
      this.#entry(action, started, undefined);
    } catch (err) {
      this.#entry(action, started, errorMessage(err));
    }
  }

  #overlay(action: Extract<FiredAction, { kind: 'overlay' }>): void {
    this.#options.sendCommand(action.overlayId, {
      command: action.command,
      widgetId: action.widgetId,
      payload: action.payload,
    });
  }

  async #webhook(action: Extract<FiredAction, { kind: 'webhook' }>): Promise<void> {
    // The URL with the event filled in must still go where the rule's own URL goes.
    let origin: string;
    try {
      origin = new URL(action.url).origin;
    } catch {
      throw new Error('the URL with the event filled in is not a valid URL');
    }
    if (origin !== action.origin)
      throw new Error(`refused: the URL with the event filled in goes to ${origin}, not ${action.origin}`);
    const body =
      action.method === 'GET' || action.body === undefined
        ? undefined
        : typeof action.body === 'string'
          ? action.body
          : JSON.stringify(action.body);
    const headers: Record<string, string> = { ...action.headers };
    if (body !== undefined && typeof action.body !== 'string' && !hasHeader(headers, 'content-type'))
      headers['Content-Type'] = 'application/json';
    await this.#request(action.url, {
      method: action.method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
  }

  /**
   * One OBS request, translated to what OBS takes; with `revertAfterMs` the state before
   * is read first and put back after that time (the previous scene, the opposite enabled or muted state).
   * Overlapping temporary changes of the same thing share one state to go back to: the one before the
   * first of them (see #temporary). Resolves once the request is done, with the revert to wait for.
   */
  async #obsRequest(action: Extract<FiredAction, { kind: 'obs' }>): Promise<Reverting | undefined> {
    const obs = this.#options.obs;
    if (!obs) throw new Error('OBS is not set up');
    const p = action.params;
    const revert = action.revertAfterMs;
    switch (action.request) {
      case 'SetCurrentProgramScene':
        return this.#change(
          action,
          'scene',
          async () => String((await obs.call('GetCurrentProgramScene')).currentProgramSceneName ?? ''),
          () => obs.call('SetCurrentProgramScene', { sceneName: p.sceneName }),
          (before) =>
            before ? obs.call('SetCurrentProgramScene', { sceneName: before }) : Promise.resolve(),
        );
      case 'SetSceneItemEnabled': {
        const { sceneItemId } = await obs.call('GetSceneItemId', {
          sceneName: p.sceneName,
          sourceName: p.sourceName,
        });
        const item = { sceneName: p.sceneName, sceneItemId };
        return this.#change(
          action,
          `item\u0000${String(p.sceneName)}\u0000${String(sceneItemId)}`,
          async () => (await obs.call('GetSceneItemEnabled', item)).sceneItemEnabled === true,
          () => obs.call('SetSceneItemEnabled', { ...item, sceneItemEnabled: p.enabled === true }),
          (before) => obs.call('SetSceneItemEnabled', { ...item, sceneItemEnabled: before }),
        );
      }
      case 'SetInputMute':
        return this.#change(
          action,
          `mute\u0000${String(p.inputName)}`,
          async () => (await obs.call('GetInputMute', { inputName: p.inputName })).inputMuted === true,
          () => obs.call('SetInputMute', { inputName: p.inputName, inputMuted: p.inputMuted === true }),
          (before) => obs.call('SetInputMute', { inputName: p.inputName, inputMuted: before }),
        );
      case 'ToggleInputMute': {
        await obs.call('ToggleInputMute', { inputName: p.inputName });
        if (!revert) return undefined;
        return {
          reverted: this.#after(action, revert, () =>
            obs.call('ToggleInputMute', { inputName: p.inputName }),
          ),
        };
      }
      case 'SetSourceFilterEnabled': {
        const filter = { sourceName: p.sourceName, filterName: p.filterName };
        return this.#change(
          action,
          `filter\u0000${String(p.sourceName)}\u0000${String(p.filterName)}`,
          async () => (await obs.call('GetSourceFilter', filter)).filterEnabled === true,
          () => obs.call('SetSourceFilterEnabled', { ...filter, filterEnabled: p.filterEnabled === true }),
          (before) => obs.call('SetSourceFilterEnabled', { ...filter, filterEnabled: before }),
        );
      }
      case 'TriggerHotkeyByName':
        await obs.call('TriggerHotkeyByName', { hotkeyName: p.hotkeyName });
        return undefined;
    }
  }

  /**
   * An OBS change, temporary with `revertAfterMs`. The state to go back to is read only when no other
   * temporary change of the same thing is under way; otherwise it is the one that change read. Each
   * revert that falls due counts down, and only the last one puts that state back.
   */
  async #change<T>(
    action: Extract<FiredAction, { kind: 'obs' }>,
    key: string,
    read: () => Promise<T>,
    apply: () => Promise<unknown>,
    restore: (before: T) => Promise<unknown>,
  ): Promise<Reverting | undefined> {
    const revert = action.revertAfterMs;
    if (!revert) {
      await apply();
      // A lasting change is what the temporary ones under way now go back to.
      const slot = this.#temporary.get(key);
      if (slot) slot.base = undefined;
      return undefined;
    }
    let slot = this.#temporary.get(key);
    if (!slot) {
      const before = await read();
      slot = this.#temporary.get(key) ?? { base: before, pending: 0 };
      this.#temporary.set(key, slot);
    }
    slot.pending++;
    const mine = slot;
    const release = (): T | undefined => {
      mine.pending--;
      if (mine.pending > 0) return undefined;
      if (this.#temporary.get(key) === mine) this.#temporary.delete(key);
      return mine.base as T | undefined;
    };
    try {
      await apply();
    } catch (err) {
      release();
      throw err;
    }
    return {
      reverted: this.#after(action, revert, () => {
        const base = release();
        return base === undefined ? Promise.resolve() : restore(base);
      }),
    };
  }

  /** Runs `undo` after `ms`; resolves when it ran (failed: logged), or at once when the runner closes. */
  #after(
    action: Extract<FiredAction, { kind: 'obs' }>,
    ms: number,
    undo: () => Promise<unknown>,
  ): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => {
        this.#timers.delete(timer);
        this.#ends.delete(resolve);
        Promise.resolve()
          .then(undo)
          .catch((err: unknown) =>
            this.#options.log?.(
              `[actions] rule "${action.ruleName}" could not undo ${action.request}: ${errorMessage(err)}`,
            ),
          )
          .finally(resolve);
      }, ms);
      this.#timers.add(timer);
      this.#ends.add(resolve);
    });
  }

  /**
   * Speech: the text cut to `maxChars`, dropped when it holds a blocked word or the
   * viewer spoke within `userCooldownMs`, rendered (or found in the cache) and sent to the overlay
   * page's audio queue as `play-sound` for `@page`.
   */
  async #speak(action: Extract<FiredAction, { kind: 'speak' }>): Promise<void> {
    const speech = this.#options.speech;
    const tts = this.#options.tts?.();
    if (!speech || !tts) throw new Error('speech is not set up');
    if (!tts.enabled) throw new Error('speech is turned off in the settings');
    // Plain text first (no engine markup or control characters), so the blocked words and the cut
    // apply to what the engine will read.
    const plain = speechText(action.text);
    const blocked = blockedWord(plain, tts.blockedWords);
    if (blocked !== undefined) throw new Error(`dropped: the text has the blocked word "${blocked}"`);
    const text = cut(plain, tts.maxChars);
    if (!text) throw new Error('nothing to say: the text is empty');
    const sender = action.sender.toLowerCase();
    if (tts.userCooldownMs > 0 && sender) {
      const now = this.#now();
      const last = this.#spokeAt.get(sender);
      if (last !== undefined && now - last < tts.userCooldownMs)
        throw new Error(`dropped: ${action.sender} was spoken for less than ${tts.userCooldownMs} ms ago`);
      this.#spokeAt.set(sender, now);
      if (this.#spokeAt.size > 10_000) this.#forgetSpeakers(now, tts.userCooldownMs);
    }
    const hash = await speech.render(text, { voice: action.voice, rate: action.rate });
    if (this.#closed) return;
    this.#options.sendCommand(action.overlayId, {
      command: 'play-sound',
      widgetId: PAGE_AUDIO,
      payload: { sound: `/tts/${hash}.wav`, volume: action.volume ?? 1 },
    });
  }

  #forgetSpeakers(now: number, cooldownMs: number): void {
    for (const [sender, at] of this.#spokeAt) if (now - at >= cooldownMs) this.#spokeAt.delete(sender);
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }

  async #streamerbot(action: Extract<FiredAction, { kind: 'streamerbot' }>): Promise<void> {
    await this.#request(`${this.#streamerbotBase()}/DoAction`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ action: { name: action.action }, args: action.args }),
    });
  }

  /** The origin a webhook (its rule's URL's) or Streamer.bot call goes to. */
  #callOrigin(action: FiredAction): string | undefined {
    if (action.kind === 'webhook') return action.origin;
    if (action.kind === 'streamerbot') return originOf(`${this.#streamerbotBase()}/DoAction`);
    return undefined;
  }

  #streamerbotBase(): string {
    return (this.#options.streamerbotUrl?.() ?? DEFAULT_STREAMERBOT_URL).replace(/\/+$/, '');
  }

  /** Why a call is not made at all: its address already holds 32 unanswered requests. */
  #refuseCall(action: FiredAction): string | undefined {
    const origin = this.#callOrigin(action);
    if (origin === undefined) return undefined;
    if ((this.#unanswered.get(origin) ?? 0) < MAX_UNANSWERED_PER_ORIGIN) return undefined;
    return `dropped: ${MAX_UNANSWERED_PER_ORIGIN} requests to ${origin} are still unanswered`;
  }

  /** One HTTP request: 5 s at most, redirects not followed, never retried; a status outside 2xx fails. */
  async #request(url: string, init: RequestInit): Promise<void> {
    const origin = originOf(url);
    this.#unanswered.set(origin, (this.#unanswered.get(origin) ?? 0) + 1);
    const controller = new AbortController();
    this.#requests.add(controller);
    const timer = this.#clock.setTimeout(
      () => controller.abort(new Error(`no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s`)),
      WEBHOOK_TIMEOUT_MS,
    );
    try {
      const res = await fetch(url, { ...init, redirect: 'manual', signal: controller.signal });
      await res.body?.cancel();
      if (res.status >= 300 && res.status < 400)
        throw new Error(`HTTP ${res.status} (redirects are not followed)`);
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
    } catch (err) {
      if (controller.signal.aborted && controller.signal.reason instanceof Error)
        throw controller.signal.reason;
      // fetch says only "fetch failed"; the cause says why (ECONNREFUSED: nothing listens there).
      const cause =
        err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
      if (cause) throw new Error(`cannot reach ${url}: ${cause.code ?? cause.message ?? errorMessage(err)}`);
      throw err;
    } finally {
      this.#clock.clearTimeout(timer);
      this.#requests.delete(controller);
      const left = (this.#unanswered.get(origin) ?? 1) - 1;
      if (left > 0) this.#unanswered.set(origin, left);
      else this.#unanswered.delete(origin);
    }
  }

  /** Runs `execute` when the queue gets to it; resolves when it ran, was skipped, dropped or cleared. */
  #enqueue(name: string, action: FiredAction, execute: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve) => {
      let queue = this.#queues.get(name);
      if (!queue) {
        queue = { running: undefined, waiting: [] };
        this.#queues.set(name, queue);
      }
      queue.waiting.push({ run: execute, done: resolve });
      while (queue.waiting.length > MAX_WAITING) {
        // The oldest waiting is dropped: a flood cannot grow a queue without bound.
        queue.waiting.shift()?.done();
        this.#entry(action, Date.now(), `dropped: queue "${name}" had more than ${MAX_WAITING} waiting`);
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
      .catch((err: unknown) => this.#chainFailed(undefined, err))
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

  queues(): QueueState[] {
    return [...this.#queues.keys()].map((name) => this.#state(name));
  }

  /** The last 200 outcomes, newest last. */
  log(): ActionLogEntry[] {
    return this.#log.slice(-LOG_SIZE).map(logEntry);
  }

  #entry(action: FiredAction, started: number, error: string | undefined): void {
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
    };
    this.#log.push(outcome);
    if (this.#log.length > LOG_SIZE * 2) this.#log.splice(0, this.#log.length - LOG_SIZE);
    if (this.#observers.size > 0) {
      const entry = logEntry(outcome);
      for (const observer of this.#observers) observer(action, entry);
    }
    if (error !== undefined) this.#logFailure(action, error, now);
  }

  /**
   * One line per failing action at most every 10 s, with how many more failed meanwhile: a flood of
   * gifts against a tool that is down says so, without a line per gift.
   */
  #logFailure(action: FiredAction, error: string, now: number): void {
    const log = this.#options.log;
    if (!log) return;
    const key = `${action.ruleId}\u0000${action.index}`;
    const quiet = this.#quiet.get(key);
    if (quiet && now - quiet.at < FAILURE_LINE_EVERY_MS) {
      quiet.suppressed++;
      return;
    }
    const more = quiet?.suppressed ? ` (${quiet.suppressed} more failed since the last line)` : '';
    this.#quiet.set(key, { at: now, suppressed: 0 });
    if (this.#quiet.size > 1000) this.#quiet.delete(this.#quiet.keys().next().value ?? key);
    log(
      `[actions] rule "${action.ruleName}" action ${action.index + 1} (${action.kind}) failed: ${error}${more}`,
    );
  }

  #wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.add(timer);
    });
  }

  /** Shutdown: waits and requests end now; nothing more starts. */
  close(): void {
    this.#closed = true;
    for (const timer of this.#timers) this.#clock.clearTimeout(timer);
    this.#timers.clear();
    for (const end of this.#ends) end();
    this.#ends.clear();
    for (const controller of this.#requests) controller.abort(new Error('the daemon is stopping'));
    for (const queue of this.#queues.values()) for (const job of queue.waiting.splice(0)) job.done();
  }
}

/** A temporary OBS change: `reverted` settles once it was put back (or the runner closed). */
interface Reverting {
  reverted: Promise<void>;
}

/** The widget id that addresses the overlay page's own audio queue. */
const PAGE_AUDIO = '@page';

/** At most `max` characters (whole code points), ending at a word when one ends near the cut. */
function cut(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  const head = chars.slice(0, max).join('');
  const space = head.lastIndexOf(' ');
  return (space > max * 0.8 ? head.slice(0, space) : head).trimEnd();
}

/** Origins of the addresses calls went to, so a flood parses each URL once. */
const ORIGINS = new Map<string, string>();
function originOf(url: string): string {
  let origin = ORIGINS.get(url);
  if (origin === undefined) {
    origin = new URL(url).origin;
    if (ORIGINS.size >= 1000) ORIGINS.clear();
    ORIGINS.set(url, origin);
  }
  return origin;
}

/** An outcome as the log keeps it: the time as a number until someone reads it. */
type Outcome = Omit<ActionLogEntry, 'at'> & { at: number };

function logEntry(outcome: Outcome): ActionLogEntry {
  return { ...outcome, at: new Date(outcome.at).toISOString() };
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((k) => k.toLowerCase() === name);
}
