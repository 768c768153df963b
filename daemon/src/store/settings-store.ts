// settings.json (decisions-2 §6): read at start, replaced whole by PUT /api/settings, written atomically
// with mode 0600 (it holds the OBS password). A file that does not parse is left as it is and the
// defaults are used until it is fixed or replaced.
import { readFile } from 'node:fs/promises';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { DEFAULT_SETTINGS, StoredSettings } from '../../../shared/settings.js';
import { errorMessage } from '../errors.js';
import { writeFileAtomic } from './atomic-file.js';

export class SettingsStore {
  #current: StoredSettings = DEFAULT_SETTINGS;
  readonly #listeners = new Set<(settings: StoredSettings) => void>();

  constructor(
    readonly file: string,
    private readonly log: (line: string) => void = () => {},
  ) {}

  async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch {
      return; // none yet: the defaults
    }
    const parsed = parseJsonWith(StoredSettings, text);
    if (parsed.ok) this.#current = parsed.value;
    else
      this.log(
        `[settings] ${this.file} is not valid (${parsed.error}): using the defaults until it is fixed`,
      );
  }

  current(): StoredSettings {
    return this.#current;
  }

  /** Saves and puts in force at once; listeners (OBS, speech) follow. */
  async replace(settings: StoredSettings): Promise<void> {
    await writeFileAtomic(this.file, `${JSON.stringify(settings, null, 2)}\n`, 0o600);
    this.#current = settings;
    for (const listener of this.#listeners) {
      try {
        listener(settings);
      } catch (err) {
        this.log(`[settings] a listener failed: ${errorMessage(err)}`);
      }
    }
  }

  onChange(listener: (settings: StoredSettings) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
