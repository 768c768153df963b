// rules.json: the rules in force, replaced atomically through the API and re-read after external edits (decisions §3).
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { type RuleList, RuleList as RuleListSchema } from '../../../shared/rules.js';
import type { DataDir } from './data-dir.js';
import type { FileWatcher } from './file-watcher.js';
import { SyncedJsonFile, WriteFailed } from './synced-json-file.js';

type ReplaceResult =
  | { ok: true; rules: RuleList }
  | { ok: false; reason: 'unreadable' | 'edited' | 'unavailable'; message: string };

export class RulesStore {
  readonly #file: SyncedJsonFile<RuleList>;
  readonly #listeners = new Set<(rules: RuleList) => void>();
  readonly #log: (line: string) => void;
  #unwatch: (() => void) | undefined;

  constructor(
    readonly dirs: DataDir,
    options: { log?: (line: string) => void } = {},
  ) {
    this.#log = options.log ?? ((line) => console.error(line));
    this.#file = new SyncedJsonFile({
      path: dirs.rulesFile,
      parse: (text) => parseJsonWith(RuleListSchema, text),
      onEdited: (rules) => this.#announce(rules),
      log: this.#log,
      label: '[rules]',
    });
  }

  /** The rules in force (the last good state of rules.json). */
  current(): RuleList {
    return this.#file.value ?? [];
  }

  /** Why rules.json cannot be read, while it cannot (saves are refused meanwhile). */
  get unreadable(): string | undefined {
    return this.#file.unreadable;
  }

  /** Called with the new list whenever the rules in force change (API or file edit). */
  subscribe(listener: (rules: RuleList) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async load(): Promise<void> {
    await this.#file.read(false);
  }

  /** Replaces every rule. Refused while rules.json cannot be read, so a hand edit in progress is never lost. */
  async replace(rules: RuleList): Promise<ReplaceResult> {
    const unreadable = (reason: string | undefined) => ({
      ok: false as const,
      reason: 'unreadable' as const,
      message: `${this.dirs.rulesFile} could not be read (${reason}); fix or remove the file first`,
    });
    if (this.#file.unreadable !== undefined) return unreadable(this.#file.unreadable);
    let outcome: Awaited<ReturnType<SyncedJsonFile<RuleList>['save']>>;
    try {
      outcome = await this.#file.save(rules);
    } catch (err) {
      if (!(err instanceof WriteFailed)) throw err;
      return { ok: false, reason: 'unavailable', message: `${err.message}; the rules were not changed` };
    }
    switch (outcome) {
      case 'written':
        // In force once on disk: a save that cannot be written changes nothing.
        this.#announce(rules);
        return { ok: true, rules };
      case 'edited':
        return {
          ok: false,
          reason: 'edited',
          message: `${this.dirs.rulesFile} was changed by another program meanwhile; its rules are in force now, send yours again`,
        };
      case 'unreadable':
        return unreadable(this.#file.unreadable);
    }
  }

  /** Starts reading edits made by other programs, through the daemon's file watcher. */
  watch(files: FileWatcher): void {
    this.#unwatch = files.watch(this.dirs.rulesFile, (change) => {
      if (change === 'changed') {
        void this.#file.read(true);
        return;
      }
      // Deleting an unreadable rules.json lifts its lock at once: the rules in force
      // stay, and the next save writes a fresh file.
      if (this.#file.unreadable === undefined || !this.#file.deleted()) return;
      this.#log(`[rules] ${this.dirs.rulesFile} was deleted; the rules in force can be saved again`);
    });
  }

  async close(): Promise<void> {
    this.#unwatch?.();
    this.#unwatch = undefined;
    await this.#file.flush();
  }

  #announce(rules: RuleList): void {
    for (const listener of this.#listeners) listener(rules);
  }
}
