// Runs and supervises the user's `cloudflared` connector: token in the environment, restarts with backoff, logs prefixed.
import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createInterface } from 'node:readline';
import type { ConnectorStatus } from '../../../shared/protocol/index.js';
import { backoffDelay } from '../../../shared/timers.js';
import { DaemonError } from '../errors.js';
import { systemTimers, type TimerHandle, type Timers } from '../timers.js';

export const CLOUDFLARED_DOWNLOAD_URL =
  'https://developers.cloudflare.com/cloudflare-one/connections/connect-networks/downloads/';

export class CloudflaredMissingError extends DaemonError {
  constructor(readonly executable: string) {
    super(
      'missing_executable',
      `cloudflared was not found ("${executable}"): install it from ${CLOUDFLARED_DOWNLOAD_URL} or pass --cloudflared PATH.`,
    );
  }
}

/** `cloudflared tunnel run` reads the connector token from TUNNEL_TOKEN; argv is readable by every local user. */
const CLOUDFLARED_ARGS = ['tunnel', '--no-autoupdate', 'run'] as const;

export interface Backoff {
  initialMs: number;
  maxMs: number;
  factor: number;
  /** A run at least this long counts as healthy: the next crash starts the backoff over. */
  resetAfterMs: number;
}

const DEFAULT_BACKOFF: Backoff = { initialMs: 1000, maxMs: 60_000, factor: 2, resetAfterMs: 60_000 };

export interface SupervisorOptions {
  executable: string;
  token: string;
  backoff?: Partial<Backoff>;
  /** Environment of the child besides TUNNEL_TOKEN (default: this process's). */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  /** The clock of the restart backoff (tests pass a fake one). */
  timers?: Timers;
}

export type SupervisorState = ConnectorStatus['connector'];

export class CloudflaredSupervisor extends EventEmitter<{
  spawn: [pid: number];
  exit: [code: number | null, signal: NodeJS.Signals | null];
  restart: [delayMs: number, attempt: number];
}> {
  readonly #options: SupervisorOptions;
  readonly #backoff: Backoff;
  readonly #log: (line: string) => void;
  #child: ChildProcess | undefined;
  #state: SupervisorState = 'stopped';
  #failures = 0;
  readonly #timers: Timers;
  #timer: TimerHandle | undefined;
  #exited: Promise<void> = Promise.resolve();

  constructor(options: SupervisorOptions) {
    super();
    this.#options = options;
    this.#backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.#timers = options.timers ?? systemTimers();
    this.#log = options.log ?? ((line) => console.log(line));
  }

  get state(): SupervisorState {
    return this.#state;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Resolves once the first connector process runs; rejects with CloudflaredMissingError when there is none. */
  async start(): Promise<void> {
    if (this.#state !== 'stopped') return;
    this.#state = 'running';
    this.#failures = 0;
    try {
      await this.#spawn();
    } catch (err) {
      this.#state = 'stopped';
      throw err;
    }
  }

  /** Stops the connector (SIGTERM, then SIGKILL after `graceMs`) and cancels any pending restart. */
  async stop(graceMs = 5000): Promise<void> {
    this.#state = 'stopped';
    if (this.#timer) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.kill('SIGTERM');
    await this.#exited;
    clearTimeout(killer);
  }

  #spawn(): Promise<void> {
    const { executable, token } = this.#options;
    const child = spawn(executable, [...CLOUDFLARED_ARGS], {
      env: { ...(this.#options.env ?? process.env), TUNNEL_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: false,
    });
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('close', () => resolve()));
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) createInterface({ input: stream }).on('line', (line) => this.#log(`[cloudflared] ${line}`));
    }
    return new Promise((resolve, reject) => {
      let started = 0;
      child.once('error', (err: NodeJS.ErrnoException) => {
        if (started) return this.#log(`[cloudflared] ${err.message}`);
        reject(
          err.code === 'ENOENT' || err.code === 'EACCES' ? new CloudflaredMissingError(executable) : err,
        );
      });
      child.once('spawn', () => {
        started = Date.now();
        this.emit('spawn', child.pid ?? 0);
        resolve();
      });
      child.once('close', (code, signal) => {
        if (!started) return;
        this.emit('exit', code, signal);
        if (this.#state === 'stopped') return;
        this.#failures = Date.now() - started >= this.#backoff.resetAfterMs ? 1 : this.#failures + 1;
        const delay = backoffDelay(this.#failures, this.#backoff);
        this.#log(
          `[cloudflared] exited (${signal ?? `status ${code}`}); restarting in ${Math.round(delay / 100) / 10} s`,
        );
        this.#state = 'restarting';
        this.emit('restart', delay, this.#failures);
        this.#timer = this.#timers.setTimeout(() => {
          this.#timer = undefined;
          if (this.#state !== 'restarting') return;
          this.#state = 'running';
          this.#spawn().catch((err: Error) => {
            // The executable vanished meanwhile: say so and stop, rather than spin.
            this.#log(`[cloudflared] ${err.message}`);
            this.#state = 'stopped';
          });
        }, delay);
      });
    });
  }
}
