// The parts of GET /status beyond {running, port} (shared/protocol/control-api.ts): each part of the daemon
// that runs (licence, tunnel, TikTok) registers how to read its own, typed by the shared schema.
import type { ObsStatus, StatusParts as Parts } from '../../../shared/protocol/index.js';

/** A reader may answer undefined: the part is left out (e.g. `tiktok` while no TikTok source runs). */
type Readers = { [K in keyof Parts]?: () => Parts[K] | undefined };

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
    const parts: Parts = {};
    // In this order in the JSON: OBS, licence, tunnel, TikTok, sources, relay, the TikFinity feed.
    for (const name of ['obs', 'licence', 'tunnel', 'tiktok', 'sources', 'relay', 'tikfinityFeed'] as const) {
      const value = this.#readers[name]?.();
      if (value !== undefined) Object.assign(parts, { [name]: value });
    }
    return parts;
  }
}

/** What `off` means for OBS, in words: the connection waits for a rule that needs it. */
export const OBS_UNUSED = 'not used by any rule: OBS is connected once a rule has an OBS action';

/** OBS's part of /status with its state in words where the state alone would mislead (`off`). */
export function obsStatusInWords(status: ObsStatus): ObsStatus {
  return status.state === 'off' && !status.detail ? { ...status, detail: OBS_UNUSED } : status;
}
