// What every action kind shares: the one signature of an executor and the runner's services it is given.
import type { OverlayCommandInput } from '../../../../shared/protocol/index.js';
import type { StoredSettings } from '../../../../shared/settings.js';
import type { ChatSendQueue } from '../../chat/send-queue.js';
import type { ChatSenders } from '../../chat/senders.js';
import type { FiredAction } from '../../rules/engine.js';

/** A fired action of one kind. */
export type ActionOf<K extends FiredAction['kind']> = Extract<FiredAction, { kind: K }>;

/**
 * What an action left behind that a queue waits for: an OBS change with `revertAfterMs` holds its
 * queue until `ended` settles (it was put back, or the runner closed), so the next one starts from
 * the state it put back.
 */
export interface Executed {
  ended: Promise<void>;
  /**
   * The action's outcome, when it is known only later (a chat message waiting for its platform's send
   * limit): the log entry is written when it settles, and the rule's next action does not wait for it.
   * It rejects as an executor throws (an ActionSkipped for a skip).
   */
  outcome?: Promise<void>;
}

/**
 * An action turned away before it started, for a refusal that is routine during a flood (every webhook of
 * every gift while a tool does not answer): the runner logs it as failed with `refused` as the reason,
 * and no exception is made for it.
 */
export interface Refused {
  refused: string;
}

/**
 * Thrown by an executor (or the rejection of `Executed.outcome`) when its action cannot run and is skipped,
 * not failed (decisions-3 §12): the log entry is `ok: true` with `skipped` saying why.
 */
export class ActionSkipped extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'ActionSkipped';
  }
}

/**
 * Runs one action. It throws (or rejects) to fail the action, or returns `Refused`: the runner writes the
 * message to the action log and the daemon's log and goes on. An executor that returns without a promise
 * ran in the caller's turn.
 */
export type Executor<K extends FiredAction['kind']> = (
  action: ActionOf<K>,
) => (K extends RefusingKind ? Refused : never) | Executed | undefined | Promise<Executed | undefined>;

/** The kinds whose executor may turn an action away before it starts (`Refused`). */
type RefusingKind = 'webhook';

/**
 * Makes a kind's executor for one runner. What the kind keeps between actions (the viewers spoken for
 * lately, the OBS states under a temporary change) lives in the executor it returns.
 */
export type ExecutorFactory<K extends FiredAction['kind']> = (services: ActionServices) => Executor<K>;

/** OBS as an `obs` action needs it: one request over obs-websocket, resolving with its answer. */
export interface ObsCalls {
  call(requestType: string, requestData?: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** The speech engine as a `speak` action needs it: renders text and resolves with the file's hash. */
export interface SpeechRenderer {
  render(text: string, options?: { voice?: string | undefined; rate?: number | undefined }): Promise<string>;
}

/** What the runner offers every kind. */
export interface ActionServices {
  /** Sends an overlay command to that overlay's pages. */
  sendCommand: (overlayId: string, command: OverlayCommandInput) => void;
  /** OBS; without it `obs` actions fail, saying OBS is not set up. */
  obs?: ObsCalls | undefined;
  /** The speech engine and its settings; without them `speak` actions fail, saying so. */
  speech?: SpeechRenderer | undefined;
  tts?: (() => StoredSettings['tts']) | undefined;
  /** Where Streamer.bot's HTTP server listens (settings). */
  streamerbotUrl?: (() => string) | undefined;
  /** Each platform's chat sender and the send queues; without them `chat` actions are skipped, saying so. */
  chat?: ChatServices | undefined;
  log?: ((line: string) => void) | undefined;
  /** Milliseconds, for cooldowns. */
  now: () => number;
  /** Resolves with true after `ms` on the runner's clock, or with false at once when the runner closes. */
  wait: (ms: number) => Promise<boolean>;
  /** Whether the runner closed (the daemon is stopping): nothing more should go out. */
  closed: () => boolean;
  /** Why a call to `origin` is not made (`dropped: …`, it holds as many unanswered requests as one address may), or undefined. */
  refusal: (origin: string) => string | undefined;
  /**
   * One HTTP request: 5 s at most, redirects not followed, never retried; a status outside 2xx fails.
   * Fails with the `refusal` when there is one.
   */
  request: (url: string, call: OutboundCall) => Promise<void>;
}

/** What a `chat` action writes with: the platforms' senders, and the queues that keep their send limits. */
export interface ChatServices {
  senders: ChatSenders;
  queue: ChatSendQueue;
}

/** What a call to another tool sends. */
export interface OutboundCall {
  method: string;
  headers?: Record<string, string>;
  /** Sent as it is. */
  body?: string;
  /** Sent as JSON, with `Content-Type: application/json` unless `headers` name a type. */
  json?: unknown;
}
