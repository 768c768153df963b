// One JSON file kept in step with its value both ways (decisions §3): our changes are written atomically,
// edits by other programs are read, and neither side silently loses the other's work.
//
// The rules, shared by overlays/<uuid>.json and rules.json:
// - A value saved here is in force at once; writes are serialised and coalesced, so a burst of saves
//   costs few writes, and a save settles once a write holding its value (or a newer one) is on disk.
// - Before writing, the file's signature is compared with the one we last wrote or read: if another
//   program wrote meanwhile (its watcher event may not have come yet), its edit is read and wins.
// - A file that does not parse is reported with its reason, the last good value stays in force, and
//   the file is never written over until it reads again or is deleted.
// - While a write of ours is under way, a change the watcher reports may be an older text of ours:
//   it is read again once our writes are done, so neither a rollback nor an edit made meanwhile happens.
// - A write that fails (a full disk) puts back the value that is on disk: nothing is in force that was
//   never written, and the save is refused (DiskFullError says so in words).
// - A file that is not JSON is reported with the line and column of the error.
import { stat } from 'node:fs/promises';
import type { ParseResult } from '../../../shared/protocol/index.js';
import { DaemonError, errorMessage } from '../errors.js';
import {
  DiskFullError,
  type FileSignature,
  readFileWithSignature,
  sameSignature,
  writeFileAtomic,
} from './atomic-file.js';

/** A save that could not be written (a full disk, above all): nothing of it is in force. */
export class WriteFailed extends DaemonError {
  constructor(path: string, cause: unknown) {
    super(
      cause instanceof DiskFullError ? 'disk_full' : 'write_failed',
      cause instanceof DiskFullError
        ? cause.message
        : `${path} could not be written (${errorMessage(cause)}); nothing was changed`,
    );
  }
}

/** What became of a save: on disk, overtaken by another program's edit (now in force), or refused. */
type SaveOutcome = 'written' | 'edited' | 'unreadable';

interface SyncedJsonFileOptions<T> {
  path: string;
  /** Turns the file's text into a value, or says why it cannot. */
  parse(text: string): ParseResult<T>;
  /** Told of every value read from disk that was not ours (another program's edit). */
  onEdited(value: T): void;
  log: (line: string) => void;
  /** Prefix of log lines, e.g. `[rules]`. */
  label: string;
  /** The file's mode when we write it (0600 for a file that holds secrets). */
  mode?: number;
}

/** Where a JSON text stops being JSON, as `line L, column C: why`; undefined when it is JSON. */
export function jsonSyntaxProblem(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /at position (\d+)/.exec(message);
    const position = at ? Number(at[1]) : text.length;
    const before = text.slice(0, position).split('\n');
    const line = before.length;
    const column = (before.at(-1)?.length ?? 0) + 1;
    const why = message
      .replace(/\s*in JSON at position \d+.*$/, '')
      .replace(/\s*\(line \d+ column \d+\)$/, '');
    return `not valid JSON at line ${line}, column ${column}: ${why}`;
  }
}

function serialiseJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export class SyncedJsonFile<T> {
  readonly path: string;
  #value: T | undefined;
  /** The value we last read from or wrote to the file: put back in force when a write fails. */
  #onDisk: T | undefined;
  /** Last text read from or written to the file, to recognise our own writes when the watcher reports them. */
  #knownText: string | undefined;
  /** The file as we last wrote or read it: anything else on disk was written by another program. */
  #signature: FileSignature | undefined;
  /** Why the file could not be read: it is never written over meanwhile. */
  #unreadable: string | undefined;
  #running: Promise<SaveOutcome> | undefined;
  #queued: Promise<SaveOutcome> | undefined;
  /** Saves so far, so a read can tell that a write of ours happened while it ran. */
  #savesStarted = 0;
  /** A change reported while we were writing was not read: read it once our writes are done. */
  #dirty = false;
  readonly #options: SyncedJsonFileOptions<T>;

  constructor(options: SyncedJsonFileOptions<T>) {
    this.path = options.path;
    this.#options = options;
  }

  /** The last good value (saved here or read from disk); undefined before the first. */
  get value(): T | undefined {
    return this.#value;
  }

  /** Why the file cannot be read, while it cannot. */
  get unreadable(): string | undefined {
    return this.#unreadable;
  }

  /** A write of ours is queued or running. */
  get writing(): boolean {
    return this.#running !== undefined || this.#queued !== undefined;
  }

  /** Puts `value` in force and writes it; refused (nothing changes) while the file cannot be read. */
  save(value: T): Promise<SaveOutcome> {
    if (this.#unreadable !== undefined) return Promise.resolve('unreadable');
    this.#value = value;
    this.#savesStarted++;
    // A write that has not started yet will pick up the newest value: join it.
    if (this.#queued) return this.#queued;
    const previous = this.#running ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(async () => {
        this.#queued = undefined;
        const running = this.#writeNow();
        this.#running = running;
        try {
          return await running;
        } finally {
          if (this.#running === running) this.#running = undefined;
          // A change reported while we were writing was skipped: read the file now that it holds still.
          if (!this.writing && this.#dirty) {
            this.#dirty = false;
            void this.read(true);
          }
        }
      });
    this.#queued = next;
    return next;
  }

  /** Settles once every save so far is on disk (or failed). */
  async flush(): Promise<void> {
    while (this.writing) await (this.#queued ?? this.#running)?.catch(() => {});
  }

  /** Stops writing this file: pending writes finish without writing, and the file is forgotten. */
  async discard(): Promise<void> {
    this.#value = undefined;
    await this.flush();
    this.#forget();
  }

  /**
   * The file was deleted. Ignored while a write of ours is under way (a rename replaces the file);
   * otherwise the lock of an unreadable file is lifted. Returns whether the deletion was taken.
   */
  deleted(): boolean {
    if (this.writing) return false;
    this.#forget();
    return true;
  }

  /**
   * Reads the file. `announce`: tell `onEdited` of a value that was not ours. `fromWriteQueue`: called by
   * the write queue itself, which knows no write of ours is under way. Returns the value it took, if any.
   */
  async read(announce: boolean, fromWriteQueue = false): Promise<T | undefined> {
    const busy = !fromWriteQueue && this.writing;
    const started = this.#savesStarted;
    let text: string;
    let signature: FileSignature;
    try {
      ({ text, signature } = await readFileWithSignature(this.path));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      this.#report(errorMessage(err));
      return undefined;
    }
    const writing = !fromWriteQueue && (busy || this.writing || this.#savesStarted !== started);
    // Our own write coming back through the watcher, or an edit that changed nothing.
    if (text === this.#knownText && this.#unreadable === undefined) {
      if (!writing) this.#signature = signature;
      return undefined;
    }
    if (announce && writing) {
      this.#dirty = true;
      return undefined;
    }
    const syntax = jsonSyntaxProblem(text);
    if (syntax !== undefined) {
      this.#report(syntax);
      return undefined;
    }
    const parsed = this.#options.parse(text);
    if (!parsed.ok) {
      this.#report(parsed.error);
      return undefined;
    }
    if (this.#unreadable !== undefined)
      this.#options.log(`${this.#options.label} ${this.path} reads again; it is in force`);
    this.#unreadable = undefined;
    this.#knownText = text;
    this.#signature = signature;
    this.#value = parsed.value;
    this.#onDisk = parsed.value;
    if (announce) this.#options.onEdited(parsed.value);
    return parsed.value;
  }

  async #writeNow(): Promise<SaveOutcome> {
    if (this.#value === undefined) return 'written';
    const wanted = serialiseJson(this.#value);
    if (this.#signature) {
      const onDisk = await stat(this.path).catch(() => undefined);
      if (onDisk && !sameSignature(this.#signature, onDisk)) {
        const taken = await this.read(true, true);
        if (this.#unreadable !== undefined) return 'unreadable';
        // The edit is in force and on disk as its author wrote it: nothing of ours is left to write.
        if (taken) return serialiseJson(taken) === wanted ? 'written' : 'edited';
      }
    }
    const value = this.#value;
    if (value === undefined) return 'written';
    const text = serialiseJson(value);
    if (text === this.#knownText) return 'written';
    const savesBefore = this.#savesStarted;
    const knownBefore = this.#knownText;
    this.#knownText = text;
    try {
      this.#signature = await writeFileAtomic(this.path, text, this.#options.mode);
    } catch (err) {
      // Nothing was written: the file still holds what it held, and so does the value in force
      // (unless a newer save came meanwhile; its own write follows).
      this.#knownText = knownBefore;
      if (this.#savesStarted === savesBefore) this.#value = this.#onDisk;
      this.#options.log(`${this.#options.label} could not write ${this.path}: ${errorMessage(err)}`);
      throw new WriteFailed(this.path, err);
    }
    this.#onDisk = value;
    return 'written';
  }

  #forget(): void {
    this.#unreadable = undefined;
    this.#knownText = undefined;
    this.#signature = undefined;
    this.#dirty = false;
  }

  #report(reason: string): void {
    this.#unreadable = reason;
    const inForce = this.#value !== undefined ? 'the last good state stays in force' : 'it is not loaded';
    this.#options.log(
      `${this.#options.label} cannot read ${this.path}: ${reason}; ${inForce} and the file is left as it is`,
    );
  }
}
