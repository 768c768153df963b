// What the command line says when something is not as expected: a mistyped option named with the usage
// line, `status` saying where it looked, and a Ctrl+C that stops at once.
import { rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliIo, main } from '../../daemon/src/cli/main.js';
import { killCliProcesses, spawnCli } from '../support/cli.js';
import { makeDataDir } from '../support/daemon.js';
import { waitFor } from '../support/wait.js';

const dirs: string[] = [];

afterEach(async () => {
  killCliProcesses();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Runs the CLI in this process, collecting what it prints. */
async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
    stopSignal: () => new Promise(() => {}),
  };
  const code = await main(argv, io);
  return { code, out, err };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

describe('a mistyped option', () => {
  it('is named in words, with the nearest option and the usage line, exit 2', async () => {
    const r = await run(['--prot', '7890']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('overlay-daemon: unknown option --prot (did you mean --port?)');
    expect(r.err).toContain('Usage: overlay-daemon [start] [options]');
    // Not the parser's own wording.
    expect(r.err).not.toMatch(/To specify a positional argument/);
  });

  it('gets the usage line of the command it was given to', async () => {
    const r = await run(['status', '--jsno']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown option --jsno (did you mean --json?)');
    expect(r.err).toContain('Usage: overlay-daemon status [--data-dir DIR]');
    expect(r.err).toContain('Run "overlay-daemon status --help" for usage.');
  });

  it('of `event` too', async () => {
    const r = await run(['event', 'gift', '--cuont', '3']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown option --cuont (did you mean --count?)');
    expect(r.err).toContain('Usage: overlay-daemon event <type> [options]');
  });

  it('a missing value says which option needs one', async () => {
    const r = await run(['--port']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--port needs a value');
    expect(r.err).toContain('Usage: overlay-daemon [start] [options]');
  });
});

describe('status', () => {
  it('without --data-dir says where it looked when no server answers', async () => {
    const dir = await makeDataDir();
    dirs.push(dir);
    const port = await freePort();
    const r = spawnCli(['status'], { OVERLAY_DATA_DIR: dir, OVERLAY_PORT: String(port) });
    expect(await r.exited).toBe(1);
    expect(r.stderr()).toContain(`no overlay server is answering at http://127.0.0.1:${port}/status`);
    expect(r.stderr()).toContain(join(dir, 'daemon.json'));
    expect(r.stderr()).toContain('--data-dir');
  }, 20_000);
});

/** A proxy that accepts connections and never answers: a request through it hangs, as to a host that is down. */
async function silentProxy(): Promise<{ url: string; held: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => {});
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    held: () => sockets.size,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('Ctrl+C', () => {
  // TikTok is reached through a proxy here, so nothing leaves the machine.
  it('says it is stopping and exits while a TikTok source retries against a closed port', async () => {
    const dir = await makeDataDir();
    dirs.push(dir);
    const closed = `http://127.0.0.1:${await freePort()}`;
    const r = spawnCli(['--port', '0', '--data-dir', dir, '--tiktok', 'someone', '--gatekeeper', closed], {
      HTTPS_PROXY: closed,
      HTTP_PROXY: closed,
      https_proxy: closed,
      http_proxy: closed,
    });
    await waitFor(() => /press Ctrl\+C to stop/.test(r.stdout()), 15_000);
    await waitFor(() => /cannot reach TikTok.*trying again/.test(r.stderr()), 30_000);
    r.child.kill('SIGINT');
    expect(await r.exited).toBe(0);
    expect(r.stdout()).toContain('SIGINT: stopping…');
    expect(r.stdout()).toContain('stopped');
  }, 60_000);

  it('exits while a TikTok connect hangs on a host that never answers', async () => {
    const dir = await makeDataDir();
    dirs.push(dir);
    const proxy = await silentProxy();
    try {
      const closed = `http://127.0.0.1:${await freePort()}`;
      const r = spawnCli(['--port', '0', '--data-dir', dir, '--tiktok', 'someone', '--gatekeeper', closed], {
        HTTPS_PROXY: proxy.url,
        HTTP_PROXY: proxy.url,
        https_proxy: proxy.url,
        http_proxy: proxy.url,
      });
      await waitFor(() => /press Ctrl\+C to stop/.test(r.stdout()), 15_000);
      await waitFor(() => /@someone is now connecting/.test(r.stderr()), 15_000);
      // TikTok's request is under way, held by the proxy.
      await waitFor(() => proxy.held() > 0, 15_000);
      r.child.kill('SIGINT');
      expect(await r.exited).toBe(0);
      expect(r.stdout()).toContain('SIGINT: stopping…');
    } finally {
      await proxy.close();
    }
  }, 40_000);
});
