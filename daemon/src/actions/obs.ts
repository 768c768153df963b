// OBS Studio through obs-websocket v5 (OBS 28+), for `obs` actions. The connection
// starts when it is first needed (an `obs` action in the rules), never blocks start-up, reconnects with
// backoff, and follows the settings at once. A wrong password stops the retries until the settings change.
// Each request is given 5 s (as webhooks are); three unanswered in a row re-open the connection, and a
// frame from OBS larger than 4 MiB closes it (OBS's answers to the requests used here are tiny).
// The JSON subprotocol (obs-websocket speaks it and msgpack; in Node the package defaults to msgpack).
import OBSWebSocket, { OBSWebSocketError } from 'obs-websocket-js/json';
import WebSocket from 'ws';
import type { ObsStatus, ObsTestResult } from '../../../shared/protocol/index.js';
import { backoffDelay } from '../../../shared/timers.js';
import { errorMessage } from '../errors.js';
import { systemTimers, type TimerHandle, type Timers } from '../timers.js';
import { type HeldSocket, WriteTurns } from '../ws/write-turns.js';

/** obs-websocket's close code for a refused password. */
const AUTHENTICATION_FAILED = 4009;
/** WebSocket's close code for a frame over `maxPayload`. */
const MESSAGE_TOO_BIG = 1009;
const BACKOFF = { initialMs: 1000, maxMs: 30_000, jitter: 0.25 };
/** A connect that neither succeeds nor fails within this is given up and tried again. */
const CONNECT_TIMEOUT_MS = 10_000;
/** A request OBS does not answer within this fails (as a webhook does). */
export const OBS_REQUEST_TIMEOUT_MS = 5000;
/** This many unanswered requests in a row: the connection is re-opened. */
export const OBS_TIMEOUTS_BEFORE_RECONNECT = 3;
/** The largest frame taken from OBS; a larger one closes the connection. */
export const OBS_MAX_FRAME_BYTES = 4 * 1024 * 1024;

/**
 * obs-websocket-js with a bound on the frames it takes: the same connection as the library's own
 * (obs-websocket-js 5.0.x `createConnection`), with the `ws` option `maxPayload`. It keeps the
 * connection's TCP socket, so the requests of a busy turn leave in one write.
 */
class BoundedObsWebSocket extends OBSWebSocket {
  held: HeldSocket | undefined;

  constructor() {
    super();
    const self = this as unknown as {
      socket: WebSocket | undefined;
      protocol: string;
      internalEventPromise(event: string): Promise<unknown>;
      onOpen(e: unknown): void;
      onMessage(e: unknown): void;
      onError(e: unknown): void;
      onClose(e: unknown): void;
      createConnection(url: string): Promise<unknown>;
    };
    self.createConnection = async (url: string) => {
      const opened = self.internalEventPromise('ConnectionOpened');
      const hello = self.internalEventPromise('op:0');
      const socket = new WebSocket(url, self.protocol, { maxPayload: OBS_MAX_FRAME_BYTES });
      self.socket = socket;
      socket.once('upgrade', (response) => {
        this.held = { corked: false, socket: response.socket };
      });
      socket.onopen = self.onOpen.bind(self);
      socket.onmessage = self.onMessage.bind(self);
      socket.onerror = self.onError.bind(self);
      socket.onclose = self.onClose.bind(self);
      await opened;
      if (!socket.protocol) throw new OBSWebSocketError(-1, 'Server sent no subprotocol');
      if (socket.protocol !== self.protocol)
        throw new OBSWebSocketError(-1, 'Server sent an invalid subprotocol');
      return hello;
    };
  }
}

interface ObsSettings {
  url: string;
  password?: string | undefined;
}

export class ObsConnection {
  readonly #settings: () => ObsSettings;
  readonly #log: (line: string) => void;
  readonly #clock: Timers;
  #obs: BoundedObsWebSocket | undefined;
  /**
   * A request finding OBS quiet is written at once; the requests of a busy turn (a gift burst firing
   * the same rule) are gathered into one write, as the hub gathers its messages (ws/write-turns.ts).
   */
  readonly #turns = new WriteTurns();
  /** Requests waiting for OBS's answer: failed at once when the connection closes. */
  readonly #waiting = new Set<(err: Error) => void>();
  /** Requests in a row that got no answer in time. */
  #timeouts = 0;
  #state: ObsStatus['state'] = 'off';
  #lastError: string | undefined;
  #attempt = 0;
  #timer: TimerHandle | undefined;
  #closed = false;
  /** Which settings the current connection uses; a change reconnects. */
  #using: string | undefined;

  constructor(options: { settings: () => ObsSettings; log?: (line: string) => void; timers?: Timers }) {
    this.#settings = options.settings;
    this.#log = options.log ?? (() => {});
    this.#clock = options.timers ?? systemTimers();
  }

  status(): ObsStatus {
    return { state: this.#state, ...(this.#lastError ? { lastError: this.#lastError } : {}) };
  }

  /** Connects if it is not connected or connecting yet (the first `obs` action, or rules that have one). */
  ensure(): void {
    if (this.#closed || this.#state === 'connected' || this.#state === 'connecting') return;
    this.#connect();
  }

  /** The settings changed: reconnect with them if OBS is in use. */
  settingsChanged(): void {
    if (this.#state === 'off' || this.#closed) return;
    if (this.#using === JSON.stringify(this.#settings())) return;
    this.#attempt = 0;
    this.#drop();
    this.#connect();
  }

  /**
   * The Settings view's "test connection": one attempt with the settings in force, on a connection of its
   * own, saying OBS's version or why not. A success also (re)starts the daemon's own connection.
   */
  async test(): Promise<ObsTestResult> {
    const settings = this.#settings();
    const obs = new BoundedObsWebSocket();
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`)),
        CONNECT_TIMEOUT_MS,
      ).unref(),
    );
    try {
      await Promise.race([
        obs.connect(settings.url, settings.password || undefined, { rpcVersion: 1 }),
        timeout,
      ]);
      const version = await Promise.race([obs.call('GetVersion'), timeout]);
      if (!this.#closed && this.#state !== 'connected') {
        this.#attempt = 0;
        this.#drop();
        this.#connect();
      }
      return { ok: true, obsVersion: version.obsVersion, websocketVersion: version.obsWebSocketVersion };
    } catch (err) {
      const message =
        err instanceof OBSWebSocketError && err.code === AUTHENTICATION_FAILED
          ? 'OBS refused the password'
          : errorMessage(err) || `cannot connect to ${settings.url}`;
      return { ok: false, error: message };
    } finally {
      obs.removeAllListeners();
      await obs.disconnect().catch(() => {});
    }
  }

  async call(requestType: string, requestData?: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.ensure();
    const obs = this.#obs;
    if (!obs || this.#state !== 'connected')
      throw new Error(`OBS is not connected${this.#lastError ? ` (${this.#lastError})` : ''}`);
    try {
      // The request names are checked by the action schema; obs-websocket-js types them by name.
      const call = obs.call.bind(obs) as (type: string, data?: object) => Promise<unknown>;
      if (obs.held && this.#turns.gather()) this.#turns.hold(obs.held);
      const answer = await this.#answered(obs, requestType, call(requestType, requestData));
      return typeof answer === 'object' && answer !== null ? (answer as Record<string, unknown>) : {};
    } catch (err) {
      if (err instanceof OBSWebSocketError)
        throw new Error(`OBS refused ${requestType}: ${err.message} (${err.code})`);
      throw err;
    }
  }

  /**
   * OBS's answer, or a failure after 5 s without one (or at once when the connection closes). A request
   * answered resets the count of timeouts; the third in a row re-opens the connection.
   */
  #answered<T>(obs: OBSWebSocket, requestType: string, answer: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const settle = () => {
        this.#clock.clearTimeout(timer);
        this.#waiting.delete(fail);
      };
      const fail = (err: Error) => {
        settle();
        reject(err);
      };
      const timer = this.#clock.setTimeout(() => {
        fail(new Error(`OBS did not answer ${requestType} within ${OBS_REQUEST_TIMEOUT_MS / 1000} s`));
        this.#timedOut(obs);
      }, OBS_REQUEST_TIMEOUT_MS);
      this.#waiting.add(fail);
      answer.then(
        (value) => {
          settle();
          if (this.#obs === obs) this.#timeouts = 0;
          resolve(value);
        },
        (err: unknown) => fail(err instanceof Error ? err : new Error(errorMessage(err))),
      );
    });
  }

  #timedOut(obs: OBSWebSocket): void {
    if (this.#obs !== obs || this.#closed) return;
    if (++this.#timeouts < OBS_TIMEOUTS_BEFORE_RECONNECT) return;
    this.#timeouts = 0;
    this.#lastError = `${OBS_TIMEOUTS_BEFORE_RECONNECT} requests in a row got no answer`;
    this.#log(
      `[obs] ${OBS_TIMEOUTS_BEFORE_RECONNECT} requests in a row got no answer within ${OBS_REQUEST_TIMEOUT_MS / 1000} s: connecting again`,
    );
    this.#drop();
    this.#connect();
  }

  /** Every request still waiting fails now: its connection is gone. */
  #failWaiting(why: string): void {
    const waiting = [...this.#waiting];
    this.#waiting.clear();
    for (const fail of waiting) fail(new Error(why));
  }

  #connect(): void {
    const settings = this.#settings();
    this.#using = JSON.stringify(settings);
    this.#state = 'connecting';
    const obs = new BoundedObsWebSocket();
    this.#obs = obs;
    // ws says why it closed a connection itself (a frame over maxPayload) in the error before the close.
    let socketError: string | undefined;
    obs.on('ConnectionError', (err) => {
      socketError = err.message;
    });
    obs.on('ConnectionClosed', (err) => {
      if (this.#obs !== obs || this.#closed) return;
      const tooBig = err.code === MESSAGE_TOO_BIG || /max payload/i.test(socketError ?? '');
      const why = tooBig
        ? `OBS sent a frame larger than ${OBS_MAX_FRAME_BYTES / 1024 / 1024} MiB`
        : err.message || `code ${err.code}`;
      this.#failWaiting(`the connection to OBS closed: ${why}`);
      if (this.#state === 'connected') this.#log(`[obs] connection lost: ${why}`);
      this.#lastError = tooBig ? why : err.message || `closed (${err.code})`;
      if (err.code === AUTHENTICATION_FAILED) {
        // Retrying with the same password cannot help; a settings change tries again.
        this.#state = 'disconnected';
        this.#lastError = 'OBS refused the password (settings: obs.password)';
        return;
      }
      this.#retry();
    });
    const timeout = this.#clock.setTimeout(() => {
      if (this.#obs !== obs || this.#state === 'connected') return;
      this.#lastError = `no answer within ${CONNECT_TIMEOUT_MS / 1000} s`;
      this.#retry();
    }, CONNECT_TIMEOUT_MS);
    obs.connect(settings.url, settings.password || undefined, { rpcVersion: 1 }).then(
      () => {
        this.#clock.clearTimeout(timeout);
        if (this.#obs !== obs) return;
        this.#state = 'connected';
        this.#attempt = 0;
        this.#lastError = undefined;
        this.#log(`[obs] connected to ${settings.url}`);
      },
      (err: unknown) => {
        this.#clock.clearTimeout(timeout);
        if (this.#obs !== obs || this.#closed) return;
        if (err instanceof OBSWebSocketError && err.code === AUTHENTICATION_FAILED) return; // ConnectionClosed says it
        this.#lastError = errorMessage(err) || 'cannot connect';
      },
    );
  }

  #retry(): void {
    if (this.#closed || this.#timer) return;
    this.#state = 'connecting';
    const delay = backoffDelay(++this.#attempt, BACKOFF, Math.random);
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#drop();
      this.#connect();
    }, delay);
  }

  #drop(): void {
    const obs = this.#obs;
    this.#obs = undefined;
    this.#timeouts = 0;
    this.#failWaiting('the connection to OBS was closed');
    obs?.removeAllListeners();
    void obs?.disconnect().catch(() => {});
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    const obs = this.#obs;
    this.#obs = undefined;
    this.#failWaiting('the daemon is stopping');
    obs?.removeAllListeners();
    await obs?.disconnect().catch(() => {});
  }
}
