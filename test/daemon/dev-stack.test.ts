// `npm run dev:stack` (scripts/dev-stack.ts) run again and stopped: what an earlier run left that the fresh
// stand-ins would not know is removed with words, and stopping it stops everything: each child that starts
// children of its own runs in a process group, stopped as a group, and the script stops on SIGTERM and
// when `npm run`'s shell goes away. The stopping is tried on a small process tree with the same helpers,
// as wrangler dev is too heavy for a test.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { resetEarlierRun } from '../../scripts/dev-stack-reset.js';
import { makeDataDir } from '../support/daemon.js';
import { groupMembers, isRunning } from '../support/process-group.js';
import { waitFor } from '../support/wait.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/process-tree.ts', import.meta.url));
const started: { pids: number[]; group?: number }[] = [];

afterEach(() => {
  // Whatever a failed test left running: its own processes only.
  for (const { pids, group } of started.splice(0)) {
    for (const pid of pids) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    if (group !== undefined)
      for (const pid of groupMembers(group)) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  }
});

/** Starts the fixture (under `sh -c` when `viaShell`, as npm runs a script) and reads its pids. */
async function startTree(viaShell: boolean) {
  const node = [process.execPath, '--import', 'tsx', FIXTURE];
  const child: ChildProcess = viaShell
    ? spawn('sh', ['-c', `${node.map((a) => `'${a}'`).join(' ')}; exit $?`], {
        stdio: ['ignore', 'pipe', 'inherit'],
      })
    : spawn(node[0]!, node.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  const record: { pids: number[]; group?: number } = { pids: [child.pid!] };
  started.push(record);
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  await waitFor(() => out.includes('"group"'), 15_000, 'the fixture to start');
  const { script, group } = JSON.parse(out.split('\n').find((l) => l.includes('"group"')) ?? '{}') as {
    script: number;
    group: number;
  };
  record.pids.push(script);
  record.group = group;
  // The child and the grandchild it starts.
  await waitFor(() => groupMembers(group).length === 2, 10_000, 'the grandchild to start');
  return { child, script, group, output: () => out };
}

describe('stopping the dev stack', () => {
  it('SIGTERM to the script stops its children and theirs, then the script', async () => {
    const { child, script, group, output } = await startTree(false);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    process.kill(script, 'SIGTERM');
    expect(await exited).toBe(0);
    expect(output()).toContain('{"stopping":"SIGTERM"}');
    expect(groupMembers(group)).toEqual([]);
  });

  it('SIGTERM to the shell npm runs it under (which does not pass it on) stops everything too', async () => {
    const { child, script, group, output } = await startTree(true);
    process.kill(child.pid!, 'SIGTERM');
    await waitFor(() => !isRunning(script), 10_000, 'the script to stop');
    expect(output()).toContain('{"stopping":"the process that started it exited"}');
    expect(groupMembers(group)).toEqual([]);
  });
});

describe('running the dev stack again', () => {
  it('removes the sign-in, tunnel and links the fresh stand-ins would not know, says so, and keeps the rest', async () => {
    const stateDir = await makeDataDir();
    const dataDir = join(stateDir, 'daemon-data');
    try {
      await mkdir(join(dataDir, 'overlays'), { recursive: true });
      // A first run: nothing to reset.
      expect(resetEarlierRun(stateDir, dataDir)).toBeUndefined();
      await mkdir(join(stateDir, 'v3', 'kv'), { recursive: true });
      for (const file of ['license.json', 'jwks.json', 'tunnel.json', 'twitch.json', 'rules.json'])
        await writeFile(join(dataDir, file), '{}');
      const words = resetEarlierRun(stateDir, dataDir);
      expect(words).toBe(
        "Started afresh from the last run: the Gatekeeper's storage (members' sign-ins, tunnels, the Kick link), " +
          "the daemon's licence, the Gatekeeper's keys it cached, the tunnel, the Twitch sign-in were removed, " +
          'because the stand-ins keep nothing between runs and the Gatekeeper signs with a new key. The overlays, ' +
          'rules, media and history are kept. Sign in again (step 1 below), then tunnel up and connect kick as before.',
      );
      expect(existsSync(join(stateDir, 'v3'))).toBe(false);
      expect((await readdir(dataDir)).sort()).toEqual(['overlays', 'rules.json']);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
