// The command line as a user runs it: a child process on its TypeScript sources (decisions §3).

import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it, type TestContext } from 'vitest';
import { runDashboardCommand } from '../../daemon/src/cli/dashboard.js';
import { type CliAs, type CliRun, ENTRY, killCliProcesses, spawnCli } from '../support/cli.js';
import { makeDataDir, pageToken, startTestDaemon } from '../support/daemon.js';
import { waitFor } from '../support/wait.js';
import { connectWs } from '../support/ws.js';

const dirs: string[] = [];

afterEach(async () => {
  killCliProcesses();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Resolves with the first stdout match, or fails when the process exits or time runs out. */
function waitForOutput(r: CliRun, pattern: RegExp, timeoutMs = 10_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(r.stdout());
      if (match) {
        cleanup();
        resolve(match);
      }
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no ${pattern} in time; stdout: ${r.stdout()} stderr: ${r.stderr()}`));
    }, timeoutMs);
    const onExit = () => {
      cleanup();
      reject(new Error(`exited before ${pattern}; stderr: ${r.stderr()}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      r.child.stdout?.off('data', check);
      r.child.off('exit', onExit);
    };
    r.child.stdout?.on('data', check);
    r.child.once('exit', onExit);
    check();
  });
}

/**
 * How to run the CLI so that file modes hold for it. root ignores them: it runs still as root (so it
 * reaches the sources wherever the clone lies, even under a private 0700 folder) but without the
 * capabilities that override modes. Without `setpriv`, as `nobody`, if `nobody` can read the sources;
 * otherwise the test says why it cannot run here.
 */
function unprivileged(ctx: TestContext): CliAs {
  if (process.getuid?.() !== 0) return {};
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));
  if (setpriv) return { prefix: [setpriv, '--bounding-set=-dac_override,-dac_read_search'] };
  const readable = spawnSync(
    process.execPath,
    ['-e', `require('node:fs').accessSync(${JSON.stringify(ENTRY)})`],
    {
      uid: 65534,
      gid: 65534,
    },
  );
  if (readable.status !== 0)
    ctx.skip(
      `running as root without setpriv, and nobody cannot read ${ENTRY} to run the CLI as another user`,
    );
  return { uid: 65534, gid: 65534 };
}

async function startCli(): Promise<{ r: CliRun; port: number; overlayId: string }> {
  const dir = await makeDataDir();
  dirs.push(dir);
  const r = spawnCli(['--port', '0', '--data-dir', dir]);
  const match = await waitForOutput(
    r,
    /overlay "Demo overlay": http:\/\/127\.0\.0\.1:(\d+)\/overlay\/([0-9a-f-]{36})/,
  );
  return { r, port: Number(match[1]), overlayId: match[2]! };
}

describe('overlay-daemon', () => {
  it('starts on a free port and prints the data directory and the demo overlay URL', async () => {
    const { r, port } = await startCli();
    expect(r.stdout()).toContain('data directory:');
    const res = await fetch(`http://127.0.0.1:${port}/status`);
    // Other parts of the daemon add their own fields (licence, tunnel…).
    expect(await res.json()).toMatchObject({ running: true, port });
  }, 20_000);

  it('prints the dashboard sign-in URL with the admin key in its fragment, and it signs in', async () => {
    const { r, port } = await startCli();
    const [, key] = await waitForOutput(
      r,
      /dashboard \(sign-in link, keep it private\): \S+\/dashboard#key=(\S+)/,
    );
    const dir = dirs.at(-1)!;
    expect(decodeURIComponent(key!)).toBe((await readFile(join(dir, 'admin.key'), 'utf8')).trim());
    const res = await fetch(`http://127.0.0.1:${port}/api/overlays`, {
      headers: { Authorization: `Bearer ${decodeURIComponent(key!)}` },
    });
    expect(res.status).toBe(200);
  }, 20_000);

  it('prints the sign-in link only when the key is new; new-key makes old links worthless at once', async () => {
    const { r, port } = await startCli();
    await waitForOutput(r, /dashboard \(sign-in link, keep it private\)/);
    const dir = dirs.at(-1)!;
    const oldKey = (await readFile(join(dir, 'admin.key'), 'utf8')).trim();
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);

    // A second start on the same data directory: no key on screen, only how to open the dashboard.
    const again = spawnCli(['--port', String(port), '--data-dir', dir]);
    await waitForOutput(again, /press Ctrl\+C to stop/);
    expect(again.stdout()).not.toContain(oldKey);
    expect(again.stdout()).not.toContain(encodeURIComponent(oldKey));
    expect(again.stdout()).toContain('dashboard: run "overlay-daemon dashboard" to open it signed in');

    const rotated = spawnCli(['new-key', '--data-dir', dir]);
    expect(await rotated.exited).toBe(0);
    expect(rotated.stdout()).toContain('Sign-in links with the old key no longer work');
    const newKey = (await readFile(join(dir, 'admin.key'), 'utf8')).trim();
    expect(newKey).not.toBe(oldKey);
    expect((await stat(join(dir, 'admin.key'))).mode & 0o777).toBe(0o600);
    const call = (key: string) =>
      fetch(`http://127.0.0.1:${port}/api/overlays`, { headers: { Authorization: `Bearer ${key}` } });
    // The running server follows the file within a moment.
    await waitFor(async () => (await call(oldKey)).status === 401, 5000, 'the old key refused');
    expect((await call(newKey)).status).toBe(200);
  }, 30_000);

  it("dashboard opens the running server's sign-in URL, or says none is running", async () => {
    const daemon = await startTestDaemon();
    try {
      const opened: string[] = [];
      const out: string[] = [];
      const code = await runDashboardCommand({
        baseUrl: daemon.url,
        dataDir: daemon.dataDir.root,
        out: (t) => out.push(t),
        err: () => {},
        open: async (url) => {
          opened.push(url);
          return true;
        },
      });
      expect(code).toBe(0);
      expect(opened).toEqual([`${daemon.url}/dashboard#key=${encodeURIComponent(daemon.adminKey)}`]);
      expect(out.join('')).toContain(opened[0]);
    } finally {
      await daemon.stop();
    }
    const errors: string[] = [];
    const code = await runDashboardCommand({
      baseUrl: daemon.url,
      dataDir: daemon.dataDir.root,
      out: () => {},
      err: (t) => errors.push(t),
      open: async () => true,
    });
    expect(code).toBe(1);
    expect(errors.join('')).toMatch(/no admin key|no overlay server is answering/);
  }, 20_000);

  it('says in one line that the port is in use, and exits 1', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const dir = await makeDataDir();
    dirs.push(dir);
    try {
      const r = spawnCli(['--port', String(port), '--data-dir', dir]);
      expect(await r.exited).toBe(1);
      expect(r.stderr().trim()).toBe(
        `overlay-daemon: port ${port} on 127.0.0.1 is already in use (is another overlay-daemon running? try --port)`,
      );
    } finally {
      blocker.close();
    }
  }, 20_000);

  it('takes its port from $OVERLAY_PORT when --port is not given', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const address = probe.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const dir = await makeDataDir();
    dirs.push(dir);
    const r = spawnCli(['--data-dir', dir], { OVERLAY_PORT: String(port) });
    await waitForOutput(r, new RegExp(`listening on http://127\\.0\\.0\\.1:${port}`));
    const bad = spawnCli(['status'], { OVERLAY_PORT: 'seventy', OVERLAY_DATA_DIR: join(dir, 'none') });
    expect(await bad.exited).toBe(2);
    expect(bad.stderr()).toContain('$OVERLAY_PORT must be a whole number from 1 to 65535, got "seventy"');
  }, 20_000);

  it('leaves no new data directory behind when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const parent = await makeDataDir();
    dirs.push(parent);
    const dir = join(parent, 'not-yet');
    try {
      const r = spawnCli(['--port', String(port), '--data-dir', dir]);
      expect(await r.exited).toBe(1);
      expect(r.stderr()).toContain('already in use');
      await expect(stat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      blocker.close();
    }
  }, 20_000);

  it('names the path when the data directory cannot be written, not the port', async (ctx) => {
    const parent = await makeDataDir();
    dirs.push(parent);
    // A folder this user may not write into.
    await chmod(parent, 0o500);
    try {
      const r = spawnCli(['--port', '0', '--data-dir', join(parent, 'data')], {}, unprivileged(ctx));
      expect(await r.exited).toBe(1);
      expect(r.stderr().trim()).toBe(
        `overlay-daemon: cannot write ${join(parent, 'data')}: permission denied (choose another folder with --data-dir)`,
      );
    } finally {
      await chmod(parent, 0o700);
    }
  }, 20_000);

  it('says in words when --data-dir is a file', async () => {
    const parent = await makeDataDir();
    dirs.push(parent);
    const file = join(parent, 'notes.txt');
    await writeFile(file, 'not a folder');
    const r = spawnCli(['--port', '0', '--data-dir', file]);
    expect(await r.exited).toBe(1);
    expect(r.stderr().trim()).toBe(
      `overlay-daemon: the data directory ${file} is a file, not a folder (choose a folder with --data-dir)`,
    );
  }, 20_000);

  it('closes WebSocket clients with 1001 and exits 0 on SIGTERM', async () => {
    const { r, port, overlayId } = await startCli();
    const token = await pageToken({ port }, overlayId);
    const client = await connectWs(`ws://127.0.0.1:${port}`);
    client.sendInit(overlayId, token);
    await client.next((m) => m.type === 'init');
    r.child.kill('SIGTERM');
    expect((await client.closed).code).toBe(1001);
    expect(await r.exited).toBe(0);
  }, 20_000);

  it('stops when `npx overlay-daemon` gets SIGTERM, leaving no server running', async () => {
    const dir = await makeDataDir();
    dirs.push(dir);
    // npx runs the server under `npm exec` and `sh -c`, neither of which passes SIGTERM on.
    const npx = spawn('npx', ['--yes', 'overlay-daemon', '--port', '0', '--data-dir', dir], {
      cwd: join(import.meta.dirname, '../..'),
      stdio: 'ignore',
    });
    try {
      const record = join(dir, 'daemon.json');
      let pid = 0;
      await waitFor(
        async () => {
          pid = JSON.parse(await readFile(record, 'utf8').catch(() => '{}')).pid ?? 0;
          return pid > 0;
        },
        30_000,
        'the server started through npx',
      );
      npx.kill('SIGTERM');
      const alive = () => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      await waitFor(() => !alive(), 5000, 'the server to stop');
      // It stopped cleanly: its record of where it listened is gone with it.
      await expect(stat(record)).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      npx.kill('SIGKILL');
    }
  }, 45_000);

  it('prints a warning for a non-loopback --host', async () => {
    const dir = await makeDataDir();
    dirs.push(dir);
    const r = spawnCli(['--host', '0.0.0.0', '--port', '0', '--data-dir', dir]);
    await waitForOutput(r, /listening on/);
    expect(r.stderr()).toMatch(
      /warning: --host 0\.0\.0\.0 makes the overlay server reachable from other devices/,
    );
  }, 20_000);

  it.each([
    [['--help'], /overlay-daemon \[start\] \[options\]/],
    [['start', '--help'], /--init-timeout-ms N/],
    [['status', '--help'], /Exits 0 when it is running/],
    [['dashboard', '--help'], /Opens the dashboard of the overlay server/],
  ])(
    '%j prints help and exits 0',
    async (args, pattern) => {
      const r = spawnCli(args);
      expect(await r.exited).toBe(0);
      expect(r.stdout()).toMatch(pattern);
    },
    20_000,
  );

  it('exits quietly when the reader of its output went away (`| head -1`): no EPIPE, its own status', async () => {
    // The read ends close at once, long before the CLI (a Node process loading its sources) writes.
    const help = spawnCli(['--help']);
    help.child.stdout?.destroy();
    expect(await help.exited).toBe(0);
    expect(help.stderr()).toBe('');
    const wrong = spawnCli(['--prot', '1']);
    wrong.child.stderr?.destroy();
    expect(await wrong.exited).toBe(2);
    // A server whose output went: it still serves, and stops as usual.
    const dir = await makeDataDir();
    dirs.push(dir);
    const server = spawnCli(['--port', '0', '--data-dir', dir]);
    server.child.stdout?.destroy();
    server.child.stderr?.destroy();
    let url = '';
    await waitFor(
      async () => {
        url = await readFile(join(dir, 'daemon.json'), 'utf8')
          .then((text) => (JSON.parse(text) as { url: string }).url)
          .catch(() => '');
        return url !== '';
      },
      15_000,
      'the server to write daemon.json',
    );
    expect((await fetch(`${url}/status`)).status).toBe(200);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it('rejects an unknown option with exit 2', async () => {
    const r = spawnCli(['--bogus']);
    expect(await r.exited).toBe(2);
    expect(r.stderr()).toContain('--bogus');
  }, 20_000);

  it('status finds the daemon through its data directory and says in words what it reports', async () => {
    const dir = await makeDataDir();
    dirs.push(dir);
    const r = spawnCli(['--port', '0', '--data-dir', dir]);
    const [, port] = await waitForOutput(r, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
    const status = spawnCli(['status', '--data-dir', dir]);
    expect(await status.exited).toBe(0);
    expect(status.stdout()).toContain(`overlay-daemon is running at http://127.0.0.1:${port}`);
    expect(status.stdout()).toContain('licence:       free tier, not signed in');
    expect(status.stdout()).toContain('remote access: off');
    // Stopped, it leaves no record behind: status then says nothing answers.
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
    await expect(stat(join(dir, 'daemon.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  }, 20_000);

  it('status prints the running daemon status (exit 0), or says none answers (exit 1)', async () => {
    const { port } = await startCli();
    const ok = spawnCli(['status', '--port', String(port), '--json']);
    expect(await ok.exited).toBe(0);
    expect(JSON.parse(ok.stdout())).toMatchObject({ running: true, port });

    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const freePort = typeof address === 'object' && address ? address.port : 0;
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
    const none = spawnCli(['status', '--port', String(freePort)]);
    expect(await none.exited).toBe(1);
    expect(none.stderr()).toContain('no overlay server is answering');
  }, 20_000);
});
