// settings.json: the same watched, checked store as overlays and rules (synced-json-file.ts), written
// atomically with mode 0600 (it holds the OBS password and the YouTube key).
// - Valid edits by hand are read while the daemon runs (within a second) and put in force.
// - A file that does not read (not JSON, an invalid value) is reported with its reason; the last good
//   settings (the defaults at a start) stay in force, and every save is refused until the file reads
//   again or is deleted, so a save never writes defaults over the secrets and sources in it.
// - A save that cannot be written (a full disk) changes nothing.
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { DEFAULT_SETTINGS, StoredSettings } from '../../../shared/settings.js';
import { errorMessage } from '../errors.js';
import type { FileWatcher } from './file-watcher.js';
import { SyncedJsonFile, WriteFailed } from './synced-json-file.js';

export type SettingsSaveResult =
  | { ok: true; settings: StoredSettings }
  | { ok: false; reason: 'unreadable' | 'edited' | 'unavailable'; message: string };

export class SettingsStore {
  readonly #file: SyncedJsonFile<StoredSettings>;
  readonly #listeners = new Set<(settings: StoredSettings) => void>();
  #unwatch: (() => void) | undefined;

  constructor(
    readonly file: string,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.#file = new SyncedJsonFile({
      path: file,
      parse: (text) => parseJsonWith(StoredSettings, text),
      onEdited: (settings) => {
        this.log(`[settings] ${file} was edited; its settings are in force`);
        this.#announce(settings);
      },
      log,
      label: '[settings]',
      mode: 0o600,
    });
  }

  async load(): Promise<void> {
    await this.#file.read(false);
  }

  /** The settings in force: the last good state of settings.json, or the defaults. */
  current(): StoredSettings {
    return this.#file.value ?? DEFAULT_SETTINGS;
  }

  /** Why settings.json cannot be read, while it cannot (saves are refused meanwhile). */
  get unreadable(): string | undefined {
    return this.#file.unreadable;
  }

  /** Saves and puts in force once written; listeners (OBS, speech, sources) follow. */
  async replace(settings: StoredSettings): Promise<SettingsSaveResult> {
    const unreadable = (reason: string | undefined): SettingsSaveResult => ({
      ok: false,
      reason: 'unreadable',
      message: `${this.file} could not be read (${reason}); fix or remove the file first, nothing was saved`,
    });
    if (this.#file.unreadable !== undefined) return unreadable(this.#file.unreadable);
    let outcome: Awaited<ReturnType<SyncedJsonFile<StoredSettings>['save']>>;
    try {
      outcome = await this.#file.save(settings);
    } catch (err) {
      if (!(err instanceof WriteFailed)) throw err;
      return { ok: false, reason: 'unavailable', message: `${err.message}; the settings were not changed` };
    }
    switch (outcome) {
      case 'written':
        this.#announce(this.current());
        return { ok: true, settings: this.current() };
      case 'edited':
        return {
          ok: false,
          reason: 'edited',
          message: `${this.file} was changed by another program meanwhile; its settings are in force now, send yours again`,
        };
      case 'unreadable':
        return unreadable(this.#file.unreadable);
    }
  }

  onChange(listener: (settings: StoredSettings) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts reading edits made by other programs, through the daemon's file watcher. */
  watch(files: FileWatcher): void {
    this.#unwatch = files.watch(this.file, (change) => {
      if (change === 'changed') {
        void this.#file.read(true);
        return;
      }
      // Deleting an unreadable settings.json lifts its lock: the settings in force stay and can be saved.
      if (this.#file.unreadable === undefined || !this.#file.deleted()) return;
      this.log(`[settings] ${this.file} was deleted; the settings in force can be saved again`);
    });
  }

  async close(): Promise<void> {
    this.#unwatch?.();
    this.#unwatch = undefined;
    await this.#file.flush();
  }

  #announce(settings: StoredSettings): void {
    for (const listener of this.#listeners) {
      try {
        listener(settings);
      } catch (err) {
        this.log(`[settings] a listener failed: ${errorMessage(err)}`);
      }
    }
  }
}
