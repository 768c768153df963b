// Media of public overlays on the Gatekeeper: each file uploaded once, named by its SHA-256
// (`HEAD` then `PUT /relay/media/<sha256>.<ext>` with the licence), so viewers load it from the edge.
import { createHash } from 'node:crypto';
import { readFile, realpath } from 'node:fs/promises';
import { extname } from 'node:path';
import { RELAY_LIMITS, RELAY_MEDIA_NAME } from '../../../shared/protocol/relay.js';
import { errorMessage } from '../errors.js';
import { FetchError, fetchJson } from '../http-client/fetch-json.js';
import { checkMediaName, mediaType, realMediaFile } from '../media/media.js';

interface RelayMediaOptions {
  mediaDir: string;
  /** The Gatekeeper's origin. */
  baseUrl: string;
  /** The licence JWT in force (undefined once signed out). */
  token: () => string | undefined;
  log: (line: string) => void;
  fetch?: typeof fetch;
}

/** What a media name was last found to be: its file (size and time, to notice an edit) and relay name. */
interface Known {
  size: number;
  mtimeMs: number;
  relayName: string;
}

const UPLOAD_TIMEOUT_MS = 120_000;

export class RelayMedia {
  readonly #options: RelayMediaOptions;
  readonly #known = new Map<string, Known>();
  /** Relay names the Gatekeeper has (answered HEAD 200, or took the PUT). */
  readonly #uploaded = new Set<string>();
  readonly #inFlight = new Map<string, Promise<string | undefined>>();
  /** Names already reported as not publishable, so a failing file is one log line, not one per message. */
  readonly #reported = new Set<string>();

  constructor(options: RelayMediaOptions) {
    this.#options = options;
  }

  /**
   * The name the relay serves a media file under (`<sha256>.<ext>`), uploading it first when the Gatekeeper
   * does not have it; undefined when it cannot be published (missing, too big, no licence, unreachable).
   */
  relayName(name: string): Promise<string | undefined> {
    let pending = this.#inFlight.get(name);
    if (!pending) {
      pending = this.#publish(name)
        .catch((err: unknown) => {
          this.#report(name, errorMessage(err));
          return undefined;
        })
        .finally(() => this.#inFlight.delete(name));
      this.#inFlight.set(name, pending);
    }
    return pending;
  }

  #report(name: string, why: string): void {
    if (this.#reported.has(name)) return;
    this.#reported.add(name);
    this.#options.log(`[relay] media "${name}" is not published to viewers: ${why}`);
  }

  async #publish(name: string): Promise<string | undefined> {
    const { mediaDir } = this.#options;
    const checked = checkMediaName(mediaDir, name);
    if (!checked.ok) return void this.#report(name, checked.reason);
    const file = await realMediaFile(name, checked.path, () => realpath(mediaDir));
    if (!file.ok) return void this.#report(name, file.reason);
    const ext = extname(name).slice(1).toLowerCase();
    if (file.info.size > RELAY_LIMITS.mediaFileBytes)
      return void this.#report(name, `larger than ${RELAY_LIMITS.mediaFileBytes / 1024 / 1024} MiB`);
    let known = this.#known.get(name);
    if (!known || known.size !== file.info.size || known.mtimeMs !== file.info.mtimeMs) {
      const bytes = await readFile(file.path);
      const relayName = `${createHash('sha256').update(bytes).digest('hex')}.${ext}`;
      if (!RELAY_MEDIA_NAME.test(relayName))
        return void this.#report(name, 'its extension is not one the relay serves');
      known = { size: file.info.size, mtimeMs: file.info.mtimeMs, relayName };
      this.#known.set(name, known);
      if (!this.#uploaded.has(relayName)) await this.#upload(known.relayName, bytes, name);
    } else if (!this.#uploaded.has(known.relayName)) {
      await this.#upload(known.relayName, await readFile(file.path), name);
    }
    this.#reported.delete(name);
    return known.relayName;
  }

  async #upload(relayName: string, bytes: Buffer, name: string): Promise<void> {
    const token = this.#options.token();
    if (!token) throw new Error('not signed in');
    const url = `${this.#options.baseUrl}/relay/media/${relayName}`;
    const common = {
      headers: { Authorization: `Bearer ${token}` },
      service: 'the Gatekeeper',
      ...(this.#options.fetch ? { fetch: this.#options.fetch } : {}),
    };
    try {
      await fetchJson(url, { ...common, method: 'HEAD' });
      this.#uploaded.add(relayName);
      return;
    } catch (err) {
      if (!(err instanceof FetchError) || err.status !== 404) throw err;
    }
    await fetchJson(url, {
      ...common,
      method: 'PUT',
      headers: { ...common.headers, 'Content-Type': mediaType(name) ?? 'application/octet-stream' },
      body: bytes,
      timeoutMs: UPLOAD_TIMEOUT_MS,
    });
    this.#uploaded.add(relayName);
  }
}
