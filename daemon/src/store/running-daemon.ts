// `daemon.json` in the data directory: where the daemon using it listens, so `status`, `event` and
// `dashboard` find it without --port (and a second daemon on the same data directory is visible).
import { readFile, rm } from 'node:fs/promises';
import * as v from 'valibot';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { writeFileAtomic } from './atomic-file.js';

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

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, owned by someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
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
