// Inside the running daemon: keeps the connector running while tunnel.json exists and the licence allows a tunnel.

import type { ConnectorStatus } from '../../../shared/protocol/index.js';
import { errorMessage } from '../errors.js';
import type { LimitDecision } from '../licence/limits.js';
import { dataDirPaths } from '../store/data-dir.js';
import { CloudflaredSupervisor, type SupervisorOptions } from './cloudflared.js';
import { readTunnelFile, type TunnelRecord, tunnelHostOf } from './tunnel-file.js';

/** The `tunnel` object of the daemon's GET /status. */

interface TunnelServiceOptions {
  dataDir: string;
  /** `cloudflared`, or the path given with --cloudflared. */
  executable: string;
  /** Premium (or its grace period) allows a tunnel; the decision's message says why not. */
  canUseTunnel: () => LimitDecision;
  /** Called with the public hostname when the tunnel comes up, and undefined when it goes down. */
  setTunnelHost: (host: string | undefined) => void;
  /** Local overlay ids and names, to print their public addresses. */
  overlays: () => { id: string; name: string }[];
  log?: (line: string) => void;
  supervisor?: Pick<SupervisorOptions, 'backoff' | 'env'>;
}

export class TunnelService {
  readonly #options: TunnelServiceOptions;
  readonly #log: (line: string) => void;
  #supervisor: CloudflaredSupervisor | undefined;
  #record: TunnelRecord | undefined;
  #reason: string | undefined;
  #queue: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(options: TunnelServiceOptions) {
    this.#options = options;
    this.#log = options.log ?? ((line) => console.log(line));
  }

  /** Brings the connector in line with tunnel.json and the licence; calls are serialised. */
  sync(): Promise<void> {
    this.#queue = this.#queue
      .then(() => this.#sync())
      .catch((err: Error) => this.#log(`[tunnel] ${err.message}`));
    return this.#queue;
  }

  status(): ConnectorStatus {
    return {
      public_url: this.#supervisor ? (this.#record?.public_url ?? null) : null,
      connector: this.#supervisor?.state ?? 'stopped',
      ...(this.#reason ? { reason: this.#reason } : {}),
    };
  }

  get pid(): number | undefined {
    return this.#supervisor?.pid;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#queue;
    await this.#stop();
  }

  async #sync(): Promise<void> {
    if (this.#closed) return;
    const read = await readTunnelFile(dataDirPaths(this.#options.dataDir).tunnelFile);
    if (!read.ok) {
      this.#reason = `cannot read tunnel.json: ${read.error}`;
      this.#log(`[tunnel] ${this.#reason}`);
      return; // a file we cannot read changes nothing (decisions §3)
    }
    const record = read.record;
    if (!record) {
      this.#reason = undefined;
      if (this.#supervisor) this.#log('[tunnel] tunnel removed: stopping the connector');
      return this.#stop();
    }
    const allowed = this.#options.canUseTunnel();
    if (!allowed.ok) {
      this.#reason = allowed.message;
      if (this.#supervisor) this.#log(`[tunnel] stopping the connector: ${allowed.message}`);
      return this.#stop();
    }
    if (this.#supervisor && this.#record?.tunnel_token === record.tunnel_token) return;
    await this.#stop();
    const supervisor = new CloudflaredSupervisor({
      executable: this.#options.executable,
      token: record.tunnel_token,
      log: this.#log,
      ...this.#options.supervisor,
    });
    // Accept the tunnel's Host before the first request can arrive through it.
    this.#options.setTunnelHost(tunnelHostOf(record));
    try {
      await supervisor.start();
    } catch (err) {
      this.#options.setTunnelHost(undefined);
      this.#reason = errorMessage(err);
      this.#log(`[tunnel] ${this.#reason}`);
      return;
    }
    this.#supervisor = supervisor;
    this.#record = record;
    this.#reason = undefined;
    this.#log(`[tunnel] remote access at ${record.public_url}`);
    for (const overlay of this.#options.overlays()) {
      this.#log(`[tunnel] overlay "${overlay.name}": ${record.public_url}/overlay/${overlay.id}`);
    }
  }

  async #stop(): Promise<void> {
    const supervisor = this.#supervisor;
    this.#supervisor = undefined;
    this.#record = undefined;
    this.#options.setTunnelHost(undefined);
    await supervisor?.stop();
  }
}
