// Child processes that start children of their own (wrangler runs workerd, the daemon runs its connector),
// each in a process group of its own, stopped as a group: SIGTERM to every process in it, then SIGKILL to
// what is left after a grace period, so stopping one leaves nothing of it running.
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { whenParentGone } from '../../daemon/src/parent-watch.js';

/** Starts `command` as the leader of a new process group (its pid is the group's id). */
export function spawnInGroup(
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
): ChildProcess {
  return spawn(command, args, { ...options, detached: true });
}

/** Whether `pid` is a running process; an exited one its parent has not reaped yet (a zombie) is not. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S …"; comm may hold spaces and parentheses, the state follows the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return true; // no /proc (macOS): kill(0) is all there is
  }
}

/** The processes of group `pgid` still running (from /proc; without it, the leader alone). */
export function groupMembers(pgid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return isRunning(pgid) ? [pgid] : [];
  }
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the comm: state, ppid, pgrp.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') members.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function emptied(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (groupMembers(pgid).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is gone already
  }
}

/**
 * Stops `child`'s whole process group: SIGTERM (or `signal`) to every process in it, SIGKILL to those
 * left after `graceMs`. Resolves once none is running (or, should a process outlive SIGKILL, a moment after).
 */
export async function stopGroup(
  child: ChildProcess,
  options: { signal?: NodeJS.Signals; graceMs?: number } = {},
): Promise<void> {
  const pgid = child.pid;
  if (pgid === undefined) return;
  signalGroup(pgid, options.signal ?? 'SIGTERM');
  if (await emptied(pgid, options.graceMs ?? 5000)) return;
  signalGroup(pgid, 'SIGKILL');
  await emptied(pgid, 2000);
}

/**
 * Runs `stop` once on SIGINT, SIGTERM or SIGHUP, or when the process that started this one goes away
 * (`npm run` under `sh -c`: a SIGTERM to npm ends npm and the shell without passing it on).
 */
export function stopOnSignals(stop: (why: string) => void, parentCheckMs = 500): void {
  let stopping = false;
  const once = (why: string) => {
    if (stopping) return;
    stopping = true;
    stop(why);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => once(signal));
  whenParentGone(() => once('the process that started it exited'), parentCheckMs);
}
