import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import {
  CLOUDFLARED_DOWNLOAD_URL,
  CloudflaredMissingError,
  CloudflaredSupervisor,
} from '../../daemon/src/tunnel/cloudflared.js';
import { FakeTimers } from '../support/fake-timers.js';
import { until } from '../support/wait.js';

const STANDIN = resolve('test/support/cloudflared-standin');
const HOSTNAME = 'o-abcdefghijklmnop.overlays.test';
const token = Buffer.from(
  JSON.stringify({ a: 'acct', t: '6f1c8c55-9a56-4b8e-8a84-0f2b2f7d1a11', s: 'c2VjcmV0LXNlY3JldA==' }),
).toString('base64');

/** The daemon's side: echoes the headers each request arrived with, and accepts WebSockets. */
let origin: Server;
let originUrl: string;
const seen: IncomingHttpHeaders[] = [];
let dir: string;
const supervisors: CloudflaredSupervisor[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tunnel-supervisor-'));
  origin = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(req.headers));
  });
  const wss = new WebSocketServer({ server: origin });
  wss.on('connection', (ws, req) => {
    ws.send(JSON.stringify({ host: req.headers.host, ip: req.headers['cf-connecting-ip'] }));
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await Promise.all(supervisors.splice(0).map((s) => s.stop()));
});
afterAll(async () => {
  origin.closeAllConnections();
  await new Promise((r) => origin.close(r));
  await rm(dir, { recursive: true, force: true });
});

function supervise(env: Record<string, string>, lines: string[] = [], backoff = {}, timers?: FakeTimers) {
  const s = new CloudflaredSupervisor({
    executable: STANDIN,
    token,
    env: { PATH: process.env.PATH, STANDIN_HOSTNAME: HOSTNAME, STANDIN_ORIGIN: originUrl, ...env },
    log: (line) => lines.push(line),
    backoff,
    ...(timers ? { timers } : {}),
  });
  supervisors.push(s);
  return s;
}

const readPort = (file: string) => () =>
  readFile(file, 'utf8').then(
    (t) => Number(t.trim()) || undefined,
    () => undefined,
  );

describe('cloudflared supervisor', () => {
  it('passes the connector token only through the environment, never on the command line', async () => {
    const portFile = join(dir, 'argv.port');
    const s = supervise({ STANDIN_PORT_FILE: portFile });
    await s.start();
    await until(readPort(portFile), 'the public port');
    const pid = s.pid ?? 0;
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
    expect(cmdline.slice(-3)).toEqual(['tunnel', '--no-autoupdate', 'run']);
    expect(cmdline.join(' ')).not.toContain(token);
    expect(cmdline.join(' ')).not.toContain('--token');
    const environ = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');
    expect(environ).toContain(`TUNNEL_TOKEN=${token}`);
  });

  it('the stand-in forwards HTTP and WebSocket like the edge: tunnel Host, the visitor IP, https', async () => {
    const portFile = join(dir, 'proxy.port');
    const lines: string[] = [];
    const s = supervise({ STANDIN_PORT_FILE: portFile }, lines);
    await s.start();
    const port = await until(readPort(portFile), 'the public port');
    // A visitor from 127.0.0.2 that tries to choose its own CF-Connecting-IP.
    const headers = await new Promise<IncomingHttpHeaders>((resolveHeaders, reject) => {
      request(
        {
          host: '127.0.0.1',
          port,
          path: '/status',
          localAddress: '127.0.0.2',
          headers: { 'cf-connecting-ip': '6.6.6.6' },
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => {
            body += c.toString();
          });
          res.on('end', () => resolveHeaders(JSON.parse(body)));
        },
      )
        .on('error', reject)
        .end();
    });
    expect(headers.host).toBe(HOSTNAME);
    expect(headers['cf-connecting-ip']).toBe('127.0.0.2');
    expect(headers['x-forwarded-proto']).toBe('https');

    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { localAddress: '127.0.0.3' });
    const first = await new Promise<string>((r, reject) => {
      ws.once('message', (data) => r(String(data)));
      ws.once('error', reject);
    });
    ws.close();
    expect(JSON.parse(first)).toEqual({ host: HOSTNAME, ip: '127.0.0.3' });
    expect(
      lines.some((l) => l.startsWith('[cloudflared] ') && l.includes('Registered tunnel connection')),
    ).toBe(true);
  });

  it('restarts a crashing connector with exponential backoff, and stop() ends it for good', async () => {
    const lines: string[] = [];
    const clock = new FakeTimers();
    const backoff = { initialMs: 100, factor: 2, maxMs: 1000 };
    const s = supervise({ STANDIN_CRASH_AFTER_MS: '150' }, lines, backoff, clock);
    const pids: number[] = [];
    const delays: number[] = [];
    s.on('spawn', (pid) => pids.push(pid));
    s.on('restart', (delay) => delays.push(delay));
    await s.start();
    // Each crash schedules a restart on the fake clock; the clock moves to it once it is due.
    await until(
      () => {
        if (pids.length >= 4) return true;
        const next = clock.nextDelay();
        if (next !== undefined) clock.advance(next);
        return undefined;
      },
      'three restarts',
      10_000,
    );
    expect(delays.slice(0, 3)).toEqual([100, 200, 400]);
    expect(new Set(pids).size).toBe(pids.length); // a new process each time
    expect(lines.some((l) => l.includes('simulated crash'))).toBe(true);
    expect(lines.some((l) => /exited \(status 1\); restarting in 0\.2 s/.test(l))).toBe(true);

    await s.stop();
    const last = pids.at(-1) ?? 0;
    const count = pids.length;
    expect(s.state).toBe('stopped');
    // No restart is left pending: well past the longest backoff step, none came and the state holds.
    expect(clock.size).toBe(0);
    clock.advance(10 * backoff.maxMs);
    expect(s.state).toBe('stopped');
    expect(pids.length).toBe(count);
    expect(() => process.kill(last, 0)).toThrow();
  });

  it('a missing executable is one clear line with the download page', async () => {
    const s = new CloudflaredSupervisor({
      executable: join(dir, 'no-such-cloudflared'),
      token,
      log: () => {},
    });
    const started = s.start();
    await expect(started).rejects.toBeInstanceOf(CloudflaredMissingError);
    await expect(started).rejects.toThrow(CLOUDFLARED_DOWNLOAD_URL);
    expect(s.state).toBe('stopped');
  });

  it('the stand-in, like cloudflared, refuses to run without a token', () => {
    const run = spawnSync(STANDIN, ['tunnel', '--no-autoupdate', 'run'], {
      env: { PATH: process.env.PATH },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('requires the ID or name of the tunnel');
    const bad = spawnSync(STANDIN, ['tunnel', '--no-autoupdate', 'run'], {
      env: { PATH: process.env.PATH, TUNNEL_TOKEN: 'not-a-token' },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('Provided Tunnel token is not valid');
  });
});
