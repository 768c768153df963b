// rules.json: the rules in force, replaced atomically through the API and re-read after external edits (decisions §3).
import { stat } from 'node:fs/promises';
import { type FSWatcher, watch } from 'chokidar';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { type RuleList, RuleList as RuleListSchema } from '../../../shared/rules.js';
import { errorMessage } from '../errors.js';
import {
  type DataDir,
  type FileSignature,
  readFileWithSignature,
  sameSignature,
  writeFileAtomic,
} from './data-dir.js';

export type ReplaceResult = { ok: true; rules: RuleList } | { ok: false; message: string };

export class RulesStore {
  #rules: RuleList = [];
  #knownText: string | undefined;
  #unreadable: string | undefined;
  #writing: Promise<void> = Promise.resolve();
  /** Writes of ours not yet renamed into place: until then the file may hold an older text of ours. */
  #writesInFlight = 0;
  #writesStarted = 0;
  /** rules.json as we last wrote or read it: anything else on disk was written by another program. */
  #signature: FileSignature | undefined;
  /** A change reported while we were writing was not read: read it once our writes are done. */
  #dirty = false;
  #watcher: FSWatcher | undefined;
  readonly #listeners = new Set<(rules: RuleList) => void>();
  readonly #log: (line: string) => void;

  constructor(
    readonly dirs: DataDir,
    options: { log?: (line: string) => void } = {},
  ) {
    this.#log = options.log ?? ((line) => console.error(line));
  }

  /** The rules in force (the last good state of rules.json). */
  current(): RuleList {
    return this.#rules;
  }

  /** Called with the new list whenever the rules in force change (API or file edit). */
  subscribe(listener: (rules: RuleList) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async load(): Promise<void> {
    await this.#read(false);
  }

  /** Replaces every rule. Refused while rules.json cannot be read, so a hand edit in progress is never lost. */
  async replace(rules: RuleList): Promise<ReplaceResult> {
    if (this.#unreadable !== undefined) {
      return {
        ok: false,
        message: `${this.dirs.rulesFile} could not be read (${this.#unreadable}); fix or remove the file first`,
      };
    }
    const text = `${JSON.stringify(rules, null, 2)}\n`;
    this.#rules = rules;
    this.#knownText = text;
    for (const listener of this.#listeners) listener(rules);
    this.#writesInFlight++;
    this.#writesStarted++;
    const write = this.#writing.then(() => this.#writeUnlessEdited(text));
    this.#writing = write
      .then(
        () => {},
        () => {},
      )
      .finally(() => {
        this.#writesInFlight--;
        // A change reported while we were writing was skipped: read the file now that it holds still.
        if (this.#writesInFlight === 0 && this.#dirty) {
          this.#dirty = false;
          void this.#read(true);
        }
      });
    if ((await write) === 'edited') {
      return {
        ok: false,
        message: `${this.dirs.rulesFile} was changed by another program meanwhile; its rules are in force now, send yours again`,
      };
    }
    return { ok: true, rules };
  }

  /**
   * Writes `text` unless another program wrote rules.json since we last wrote or read it: then its
   * edit is read and stays in force instead of being overwritten (decisions §3; docs/daemon.md).
   */
  async #writeUnlessEdited(text: string): Promise<'written' | 'edited'> {
    const onDisk = await stat(this.dirs.rulesFile).catch(() => undefined);
    if (this.#signature && onDisk && !sameSignature(this.#signature, onDisk)) {
      await this.#read(true, true);
      if (this.#knownText !== text || this.#unreadable !== undefined) return 'edited';
    }
    this.#signature = await writeFileAtomic(this.dirs.rulesFile, text);
    return 'written';
  }

  async watch(settleMs = 150): Promise<void> {
    const watcher = watch(this.dirs.rulesFile, {
      ignoreInitial: true,
      awaitWriteFinish: { stabilityThreshold: settleMs, pollInterval: 25 },
    });
    watcher.on('add', () => void this.#read(true));
    watcher.on('change', () => void this.#read(true));
    // Deleting an unreadable rules.json lifts its lock at once (decisions-2 §5): the rules in force stay,
    // and the next save writes a fresh file.
    watcher.on('unlink', () => {
      if (this.#unreadable === undefined) return;
      this.#unreadable = undefined;
      this.#knownText = undefined;
      this.#signature = undefined;
      this.#log(`[rules] ${this.dirs.rulesFile} was deleted; the rules in force can be saved again`);
    });
    watcher.on('error', (err) => this.#log(`[rules] watching ${this.dirs.rulesFile} failed: ${String(err)}`));
    this.#watcher = watcher;
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  }

  async close(): Promise<void> {
    await this.#watcher?.close();
    await this.#writing;
  }

  /** `fromWriteQueue`: called by the write queue itself, which knows no write of ours is under way. */
  async #read(announce: boolean, fromWriteQueue = false): Promise<void> {
    const path = this.dirs.rulesFile;
    const busy = this.#writesInFlight > 0;
    const started = this.#writesStarted;
    let text: string;
    let signature: FileSignature;
    try {
      ({ text, signature } = await readFileWithSignature(path));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      this.#reject(path, errorMessage(err));
      return;
    }
    const writing = !fromWriteQueue && (busy || this.#writesInFlight > 0 || this.#writesStarted !== started);
    if (text === this.#knownText && this.#unreadable === undefined) {
      if (!writing) this.#signature = signature;
      return;
    }
    // Taking an older text of ours for an edit would roll the rules back; our rename brings its own
    // event, and the file is read again once our writes are done, so an edit made meanwhile is kept.
    if (announce && writing) {
      this.#dirty = true;
      return;
    }
    const parsed = parseJsonWith(RuleListSchema, text);
    if (!parsed.ok) {
      this.#reject(path, parsed.error);
      return;
    }
    this.#unreadable = undefined;
    this.#knownText = text;
    this.#signature = signature;
    this.#rules = parsed.value;
    if (announce) for (const listener of this.#listeners) listener(parsed.value);
  }

  #reject(path: string, reason: string): void {
    this.#unreadable = reason;
    this.#log(
      `[rules] cannot read ${path}: ${reason}; the last good rules stay in force and the file is left as it is`,
    );
  }
}
