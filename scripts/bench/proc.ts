// Reads a process's resident memory and CPU time from /proc (Linux), for the server children and workerd.
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** VmRSS of /proc/<pid>/status, in bytes. */
export async function rssBytes(pid: number): Promise<number> {
  return (await residentBytes(pid)).rss;
}

/**
 * VmRSS, and its anonymous part (RssAnon: heap, buffers, stacks: what the process allocated, as opposed
 * to the pages of its executable and libraries, which the host may drop from an idle process at will).
 */
export async function residentBytes(pid: number): Promise<{ rss: number; anon: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB$`, 'm').exec(status);
    if (!match?.[1]) throw new Error(`no ${name} for process ${pid}`);
    return Number(match[1]) * 1024;
  };
  return { rss: field('VmRSS'), anon: field('RssAnon') };
}

interface StatFields {
  comm: string;
  ppid: number;
  /** utime + stime, seconds. */
  cpuSeconds: number;
}

async function readStat(pid: number): Promise<StatFields> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8');
  // comm may contain spaces and parentheses: the fields after it start after the last ')'.
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  const rest = text
    .slice(close + 2)
    .trim()
    .split(' ');
  // proc(5): field 3 is state (rest[0]), 4 ppid, 14 utime, 15 stime.
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  return {
    comm: text.slice(open + 1, close),
    ppid: Number(rest[1]),
    cpuSeconds: (utime + stime) / clockTicks(),
  };
}

/** CPU time (user + system) a process has used so far, in seconds (10 ms resolution). */
export async function cpuSeconds(pid: number): Promise<number> {
  return (await readStat(pid)).cpuSeconds;
}

/** Child processes of `parent` whose command name is `comm` (e.g. the workerd that Miniflare spawned). */
export async function childrenNamed(parent: number, comm: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readStat(Number(entry));
      if (stat.ppid === parent && stat.comm === comm) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}
