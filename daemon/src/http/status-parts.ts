// The parts of GET /status beyond {running, port} (shared/protocol/control-api.ts): each part of the daemon
// that runs (licence, tunnel, TikTok) registers how to read its own, typed by the shared schema.
import type { StatusParts as Parts } from '../../../shared/protocol/index.js';

type Readers = { [K in keyof Parts]?: () => NonNullable<Parts[K]> };

export class StatusParts {
  readonly #readers: Readers = {};

  /** Registers (or replaces) how a part is read; it is read on every GET /status. */
  set<K extends keyof Parts>(name: K, read: NonNullable<Readers[K]>): this {
    this.#readers[name] = read;
    return this;
  }

  delete(name: keyof Parts): void {
    delete this.#readers[name];
  }

  /** Every registered part, read now. */
  read(): Parts {
    const { licence, tunnel, tiktok, obs, sources } = this.#readers;
    return {
      ...(obs ? { obs: obs() } : {}),
      ...(licence ? { licence: licence() } : {}),
      ...(tunnel ? { tunnel: tunnel() } : {}),
      ...(tiktok ? { tiktok: tiktok() } : {}),
      ...(sources ? { sources: sources() } : {}),
    };
  }
}
