// rules.json: the rules in force, replaced atomically through the API and re-read after external edits (decisions §3).
import { readFile } from 'node:fs/promises';
import { type FSWatcher, watch } from 'chokidar';
import { parseJsonWith } from '../../shared/protocol.js';
import { type RuleList, RuleList as RuleListSchema } from '../../shared/rules.js';
import { type DataDir, writeFileAtomic } from './store.js';

export type ReplaceResult = { ok: true; rules: RuleList } | { ok: false; message: string };

export class RulesStore {
  #rules: RuleList = [];
  #knownText: string | undefined;
  #unreadable: string | undefined;
  #writing: Promise<void> = Promise.resolve();
  /** Writes of ours not yet renamed into place: until then the file may hold an older text of ours. */
  #writesInFlight = 0;
  #writesStarted = 0;
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
    const write = this.#writing.then(() => writeFileAtomic(this.dirs.rulesFile, text));
    this.#writing = write.catch(() => {}).finally(() => this.#writesInFlight--);
    await write;
    return { ok: true, rules };
  }

  async watch(settleMs = 150): Promise<void> {
    const watcher = watch(this.dirs.rulesFile, {
      ignoreInitial: true,
      awaitWriteFinish: { stabilityThreshold: settleMs, pollInterval: 25 },
    });
    watcher.on('add', () => void this.#read(true));
    watcher.on('change', () => void this.#read(true));
    watcher.on('error', (err) => this.#log(`[rules] watching ${this.dirs.rulesFile} failed: ${String(err)}`));
    this.#watcher = watcher;
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  }

  async close(): Promise<void> {
    await this.#watcher?.close();
    await this.#writing;
  }

  async #read(announce: boolean): Promise<void> {
    const path = this.dirs.rulesFile;
    const busy = this.#writesInFlight > 0;
    const started = this.#writesStarted;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      this.#reject(path, (err as Error).message);
      return;
    }
    if (text === this.#knownText && this.#unreadable === undefined) return;
    // Taking an older text of ours for an edit would roll the rules back; our rename brings its own event.
    if (announce && (busy || this.#writesInFlight > 0 || this.#writesStarted !== started)) return;
    const parsed = parseJsonWith(RuleListSchema, text);
    if (!parsed.ok) {
      this.#reject(path, parsed.error);
      return;
    }
    this.#unreadable = undefined;
    this.#knownText = text;
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
