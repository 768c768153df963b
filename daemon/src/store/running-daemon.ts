// `daemon.json` in the data directory: where the daemon using it listens, so `status`, `event` and
// `dashboard` find it without --port (and a second daemon on the same data directory is visible).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import * as v from 'valibot';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { writeFileAtomic } from './atomic-file.js';
import { type DataDir, DataDirError, dataDirProblem } from './data-dir.js';

const RunningDaemonRecord = v.object({
  url: v.pipe(v.string(), v.url()),
  pid: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  startedAt: v.string(),
});
type RunningDaemonRecord = v.InferOutput<typeof RunningDaemonRecord>;

export async function writeRunningDaemon(file: string, url: string): Promise<void> {
  const record: RunningDaemonRecord = { url, pid: process.pid, startedAt: new Date().toISOString() };
  await writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`);
}

/** Removes the record if it is still this process's (a newer daemon may have written its own). */
export async function removeRunningDaemon(file: string): Promise<void> {
  const record = await readRunningDaemon(file, () => true);
  if (record?.pid === process.pid) await rm(file, { force: true });
}

/**
 * Whether a process of that pid runs. A zombie (ended, not yet reaped by its parent: a daemon killed with
 * `kill -9` lingers so for a moment) runs no more, although signal 0 still reaches it.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists, owned by someone else.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return !processEnded(pid);
}

/**
 * Linux: the process's state in /proc/<pid>/stat is Z (zombie) or X (dead). Elsewhere, or when that file
 * does not read, no (signal 0 has the last word).
 */
function processEnded(pid: number): boolean {
  if (process.platform !== 'linux') return false;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    // Gone between the signal and the read.
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
  // "<pid> (<name>) <state> …": the name may hold spaces and parentheses, the state follows the last ")".
  const state = stat.slice(stat.lastIndexOf(')') + 1).trim()[0];
  return state === 'Z' || state === 'X';
}

/** The record of a daemon still running on this data directory, or undefined (none, unreadable, or stale). */
export async function readRunningDaemon(
  file: string,
  alive: (pid: number) => boolean = processAlive,
): Promise<RunningDaemonRecord | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  const parsed = parseJsonWith(RunningDaemonRecord, text);
  return parsed.ok && alive(parsed.value.pid) ? parsed.value : undefined;
}

// `daemon.lock`: one daemon per data directory. Made whole in one step (a private file linked into
// place, which fails when the name exists), so no one ever reads a half-written lock.
const LockRecord = v.object({
  pid: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  /** Tells apart two daemons of one process (tests start several): only its own lock is removed. */
  token: v.string(),
  startedAt: v.string(),
});
type LockRecord = v.InferOutput<typeof LockRecord>;

/** The data directory is in use by another daemon: the message names it (pid, and its URL when known). */
export class DataDirLockedError extends DataDirError {
  constructor(
    path: string,
    message: string,
    readonly holderPid: number,
  ) {
    super(path, message);
  }
}

export interface DataDirLock {
  /** Removes the lock if it is still this daemon's. */
  release(): Promise<void>;
}

/**
 * Takes the data directory for this daemon. Another daemon still running on it is a DataDirLockedError
 * that says which process holds it; a lock left by a process that is gone (a crash, a power cut) is
 * taken over. The folder must exist.
 */
export async function lockDataDir(
  dirs: Pick<DataDir, 'root' | 'lockFile' | 'daemonFile'>,
  alive: (pid: number) => boolean = processAlive,
): Promise<DataDirLock> {
  const token = randomBytes(9).toString('base64url');
  const record: LockRecord = { pid: process.pid, token, startedAt: new Date().toISOString() };
  const temp = `${dirs.lockFile}.${token}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify(record)}\n`, { mode: 0o600, flag: 'wx' });
    // Twice at most: a stale lock is removed once, then the name is taken or someone else was faster.
    for (let attempt = 0; ; attempt++) {
      try {
        await link(temp, dirs.lockFile);
        return { release: () => releaseLock(dirs.lockFile, token) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      }
      const holder = await readLock(dirs.lockFile);
      if (holder && alive(holder.pid)) throw await lockedError(dirs, holder.pid);
      // Gone (or not a lock this program wrote): its process is not running this directory.
      await rm(dirs.lockFile, { force: true });
    }
  } catch (err) {
    if (err instanceof DataDirError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      const holder = await readLock(dirs.lockFile);
      throw await lockedError(dirs, holder?.pid);
    }
    // Named by the folder, not by the lock's temporary file.
    const e = err as NodeJS.ErrnoException;
    throw dataDirProblem(Object.assign(new Error(e.message), { code: e.code }), dirs.root);
  } finally {
    await rm(temp, { force: true }).catch(() => {});
  }
}

async function readLock(file: string): Promise<LockRecord | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = parseJsonWith(LockRecord, text);
  return parsed.ok ? parsed.value : undefined;
}

async function lockedError(
  dirs: Pick<DataDir, 'root' | 'lockFile' | 'daemonFile'>,
  pid: number | undefined,
): Promise<DataDirLockedError> {
  const running = pid === undefined ? undefined : await readRunningDaemon(dirs.daemonFile, () => true);
  const where = running && running.pid === pid ? `, listening on ${running.url}` : '';
  const who =
    pid === undefined ? 'another overlay-daemon' : `another overlay-daemon (process ${pid}${where})`;
  // Without its daemon.json the holder may be another program that took the pid after a crash.
  const orphan = where ? '' : ` (if no overlay-daemon is running, delete ${dirs.lockFile})`;
  return new DataDirLockedError(
    dirs.lockFile,
    `the data directory ${dirs.root} is in use by ${who}; stop that one first, or choose another folder with --data-dir${orphan}`,
    pid ?? 0,
  );
}

async function releaseLock(file: string, token: string): Promise<void> {
  const holder = await readLock(file);
  if (holder?.token === token) await rm(file, { force: true });
}
