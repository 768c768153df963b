// OBS Studio through obs-websocket v5 (OBS 28+), for `obs` actions (decisions-2 §6). The connection
// starts when it is first needed (an `obs` action in the rules), never blocks start-up, reconnects with
// backoff, and follows the settings at once. A wrong password stops the retries until the settings change.
// The JSON subprotocol (obs-websocket speaks it and msgpack; in Node the package defaults to msgpack).
import OBSWebSocket, { OBSWebSocketError } from 'obs-websocket-js/json';
import type { ObsStatus, ObsTestResult } from '../../../shared/protocol/index.js';
import { backoffDelay } from '../../../shared/timers.js';
import { errorMessage } from '../errors.js';

/** obs-websocket's close code for a refused password. */
const AUTHENTICATION_FAILED = 4009;
const BACKOFF = { initialMs: 1000, maxMs: 30_000, jitter: 0.25 };
/** A connect that neither succeeds nor fails within this is given up and tried again. */
const CONNECT_TIMEOUT_MS = 10_000;

interface ObsSettings {
  url: string;
  password?: string | undefined;
}

export class ObsConnection {
  readonly #settings: () => ObsSettings;
  readonly #log: (line: string) => void;
  #obs: OBSWebSocket | undefined;
  #state: ObsStatus['state'] = 'off';
  #lastError: string | undefined;
  #attempt = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /** Which settings the current connection uses; a change reconnects. */
  #using: string | undefined;

  constructor(options: { settings: () => ObsSettings; log?: (line: string) => void }) {
    this.#settings = options.settings;
    this.#log = options.log ?? (() => {});
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
    const obs = new OBSWebSocket();
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
      const answer = await call(requestType, requestData);
      return typeof answer === 'object' && answer !== null ? (answer as Record<string, unknown>) : {};
    } catch (err) {
      if (err instanceof OBSWebSocketError)
        throw new Error(`OBS refused ${requestType}: ${err.message} (${err.code})`);
      throw err;
    }
  }

  #connect(): void {
    const settings = this.#settings();
    this.#using = JSON.stringify(settings);
    this.#state = 'connecting';
    const obs = new OBSWebSocket();
    this.#obs = obs;
    obs.on('ConnectionClosed', (err) => {
      if (this.#obs !== obs || this.#closed) return;
      if (this.#state === 'connected') this.#log(`[obs] connection lost: ${err.message || err.code}`);
      this.#lastError = err.message || `closed (${err.code})`;
      if (err.code === AUTHENTICATION_FAILED) {
        // Retrying with the same password cannot help; a settings change tries again.
        this.#state = 'disconnected';
        this.#lastError = 'OBS refused the password (settings: obs.password)';
        return;
      }
      this.#retry();
    });
    const timeout = setTimeout(() => {
      if (this.#obs !== obs || this.#state === 'connected') return;
      this.#lastError = `no answer within ${CONNECT_TIMEOUT_MS / 1000} s`;
      this.#retry();
    }, CONNECT_TIMEOUT_MS);
    timeout.unref();
    obs.connect(settings.url, settings.password || undefined, { rpcVersion: 1 }).then(
      () => {
        clearTimeout(timeout);
        if (this.#obs !== obs) return;
        this.#state = 'connected';
        this.#attempt = 0;
        this.#lastError = undefined;
        this.#log(`[obs] connected to ${settings.url}`);
      },
      (err: unknown) => {
        clearTimeout(timeout);
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
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#drop();
      this.#connect();
    }, delay);
    this.#timer.unref();
  }

  #drop(): void {
    const obs = this.#obs;
    this.#obs = undefined;
    obs?.removeAllListeners();
    void obs?.disconnect().catch(() => {});
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const obs = this.#obs;
    this.#obs = undefined;
    obs?.removeAllListeners();
    await obs?.disconnect().catch(() => {});
  }
}
