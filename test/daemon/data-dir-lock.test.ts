// One daemon per data directory: `daemon.lock` holds the running daemon's pid. A second start on the
// same folder (in the same process, or from the command line) fails in words naming the process that
// holds it, and leaves the running daemon's daemon.json alone; a lock left by a process that is gone
// is taken over.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, processAlive } from '../../daemon/src/store/running-daemon.js';
import { killCliProcesses, spawnCli } from '../support/cli.js';
import { makeDataDir, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';

const dirs: string[] = [];
const daemons: TestDaemon[] = [];
const parents: ChildProcess[] = [];

afterEach(async () => {
  killCliProcesses();
  // The zombie's parent: once it ends, the zombie is reaped.
  for (const parent of parents.splice(0)) parent.kill('SIGKILL');
  for (const daemon of daemons.splice(0)) await daemon.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const dir = await makeDataDir();
  dirs.push(dir);
  return dir;
}

async function start(dir: string): Promise<TestDaemon> {
  const daemon = await startTestDaemon({ dataDir: dir });
  daemons.push(daemon);
  return daemon;
}

/** A pid that no process has any more: a child that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

/** The state letter of a process in /proc (Linux): `Z` for a zombie. */
function stateOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 1).trim()[0];
  } catch {
    return undefined;
  }
}

/**
 * A real zombie: a child that has exited while its parent (a shell that became `sleep`) never reaps
 * it, as a daemon killed with `kill -9` is until whoever started it waits for it.
 */
async function zombiePid(): Promise<number> {
  const parent = spawn('sh', ['-c', 'true & echo $!; exec sleep 60'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  parents.push(parent);
  const pid = await new Promise<number>((resolve, reject) => {
    parent.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    parent.once('error', reject);
  });
  await waitFor(() => stateOf(pid) === 'Z', 5000, `process ${pid} to be a zombie`);
  return pid;
}

describe('the data directory lock', () => {
  it('refuses a second daemon on the same data directory, naming the one that holds it', async () => {
    const dir = await dataDir();
    const first = await start(dir);
    const record = await readFile(join(dir, 'daemon.json'), 'utf8');
    const lock = JSON.parse(await readFile(join(dir, 'daemon.lock'), 'utf8')) as { pid: number };
    expect(lock.pid).toBe(process.pid);

    const second = startTestDaemon({ dataDir: dir });
    await expect(second).rejects.toBeInstanceOf(DataDirLockedError);
    await expect(second).rejects.toThrow(
      `the data directory ${dir} is in use by another overlay-daemon (process ${process.pid}, listening on ${first.url}); stop that one first, or choose another folder with --data-dir`,
    );
    // The running daemon keeps its record and its lock, and still serves.
    expect(await readFile(join(dir, 'daemon.json'), 'utf8')).toBe(record);
    expect(JSON.parse(await readFile(join(dir, 'daemon.lock'), 'utf8'))).toEqual(lock);
    expect((await fetch(`${first.url}/status`)).status).toBe(200);

    // Stopped, it frees the folder: the next start takes it.
    await first.close();
    daemons.splice(0);
    await expect(stat(join(dir, 'daemon.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
    const third = await start(dir);
    expect((await fetch(`${third.url}/status`)).status).toBe(200);
  });

  it('takes over a lock left by a process that is gone', async () => {
    const dir = await dataDir();
    const pid = deadPid();
    await writeFile(
      join(dir, 'daemon.lock'),
      JSON.stringify({ pid, token: 'crashed', startedAt: '2026-01-01T00:00:00.000Z' }),
    );
    const daemon = await start(dir);
    expect(JSON.parse(await readFile(join(dir, 'daemon.lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    expect((await fetch(`${daemon.url}/status`)).status).toBe(200);
  });

  it.runIf(process.platform === 'linux')(
    'takes over a lock whose process ended but is not yet reaped (a zombie), as right after kill -9',
    async () => {
      const dir = await dataDir();
      const pid = await zombiePid();
      // Signal 0 still reaches a zombie: that alone would call it running.
      expect(() => process.kill(pid, 0)).not.toThrow();
      expect(processAlive(pid)).toBe(false);
      await writeFile(
        join(dir, 'daemon.lock'),
        JSON.stringify({ pid, token: 'killed', startedAt: '2026-01-01T00:00:00.000Z' }),
      );
      const daemon = await start(dir);
      expect(JSON.parse(await readFile(join(dir, 'daemon.lock'), 'utf8'))).toMatchObject({
        pid: process.pid,
      });
      expect((await fetch(`${daemon.url}/status`)).status).toBe(200);
      // A live process is still one.
      expect(processAlive(process.pid)).toBe(true);
    },
  );

  it('names a live holder without a daemon.json by its pid, and the lock file to delete if it is no daemon', async () => {
    const dir = await dataDir();
    const other = process.ppid;
    await writeFile(
      join(dir, 'daemon.lock'),
      JSON.stringify({ pid: other, token: 'elsewhere', startedAt: '2026-01-01T00:00:00.000Z' }),
    );
    await expect(startTestDaemon({ dataDir: dir })).rejects.toThrow(
      `the data directory ${dir} is in use by another overlay-daemon (process ${other}); stop that one first, or choose another folder with --data-dir (if no overlay-daemon is running, delete ${join(dir, 'daemon.lock')})`,
    );
    // Nothing of the refused start is left behind, and the holder's lock is untouched.
    await expect(stat(join(dir, 'daemon.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(JSON.parse(await readFile(join(dir, 'daemon.lock'), 'utf8'))).toMatchObject({ pid: other });
  });

  it('a second `overlay-daemon` on the same data directory exits 1 saying which process holds it', async () => {
    const dir = await dataDir();
    const first = spawnCli(['--port', '0', '--data-dir', dir]);
    let url = '';
    await waitFor(
      () => {
        url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(first.stdout())?.[1] ?? '';
        return url !== '';
      },
      15_000,
      'the first daemon',
    );
    const record = await readFile(join(dir, 'daemon.json'), 'utf8');
    const pid = first.child.pid;
    // On the same port too: the folder is named, not the busy port.
    for (const port of ['0', url.split(':').at(-1)!]) {
      const second = spawnCli(['--port', port, '--data-dir', dir]);
      expect(await second.exited).toBe(1);
      expect(second.stderr().trim()).toBe(
        `overlay-daemon: the data directory ${dir} is in use by another overlay-daemon (process ${pid}, listening on ${url}); stop that one first, or choose another folder with --data-dir`,
      );
    }
    expect(await readFile(join(dir, 'daemon.json'), 'utf8')).toBe(record);
    expect((await fetch(`${url}/status`)).status).toBe(200);
    // `status` still finds the running one through its data directory.
    const status = spawnCli(['status', '--data-dir', dir]);
    expect(await status.exited).toBe(0);
    expect(status.stdout()).toContain(`overlay-daemon is running at ${url}`);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    await expect(stat(join(dir, 'daemon.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
  }, 45_000);
});
