import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../daemon/src/cli/main.js';
import { runRemoteCommand } from '../../daemon/src/cli/remote.js';
import { type RunningDaemon, startDaemon } from '../../daemon/src/daemon.js';
import { GatekeeperClient } from '../../daemon/src/licence/gatekeeper-client.js';
import { writeLicence } from '../../daemon/src/licence/licence-file.js';
import { type RemoteAccess, startRemoteAccess } from '../../daemon/src/remote-access.js';
import { dataDirPaths } from '../../daemon/src/store/data-dir.js';
import { CLOUDFLARED_DOWNLOAD_URL } from '../../daemon/src/tunnel/cloudflared.js';
import {
  TunnelCommandError,
  tunnelDown,
  tunnelStatusLines,
  tunnelUp,
} from '../../daemon/src/tunnel/commands.js';
import { readTunnelFile } from '../../daemon/src/tunnel/tunnel-file.js';
import { type FakeGatekeeper, fakeSubdomain, startFakeGatekeeper } from '../support/fakes/gatekeeper.js';
import { freePort } from '../support/local-stack.js';
import { until } from '../support/wait.js';

const STANDIN = resolve('test/support/cloudflared-standin');
const USER = 'patron-9';

let gatekeeper: FakeGatekeeper;
let dataDir: string;
let daemon: RunningDaemon | undefined;
let remote: RemoteAccess | undefined;

beforeAll(async () => {
  gatekeeper = await startFakeGatekeeper({ userId: USER });
});
afterAll(() => gatekeeper?.close());
beforeEach(async () => {
  gatekeeper.tier = 'premium';
  gatekeeper.validateMode = 'ok';
  gatekeeper.tunnels.clear();
  dataDir = await mkdtemp(join(tmpdir(), 'tunnel-remote-'));
});
afterEach(async () => {
  await remote?.close();
  await daemon?.close();
  remote = undefined;
  daemon = undefined;
  await rm(dataDir, { recursive: true, force: true });
});

async function signIn(tier: 'premium' | 'free' = 'premium'): Promise<void> {
  await writeLicence(join(dataDir, 'license.json'), {
    token: gatekeeper.issueToken(USER, tier),
    tier,
    validated_at: new Date().toISOString(),
    user_id: USER,
    verdict: 'ok',
  });
}

const ctx = () => ({ client: new GatekeeperClient(gatekeeper.url), dataDir });

function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolveResponse, reject) => {
    request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c.toString();
      });
      res.on('end', () => resolveResponse({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

/** The real daemon with licence and tunnel attached, the stand-in connector proxying a public port to it. */
async function startWithRemoteAccess(
  portFile: string,
): Promise<{ daemon: RunningDaemon; remote: RemoteAccess; lines: string[] }> {
  const lines: string[] = [];
  daemon = await startDaemon({ port: 0, host: '127.0.0.1', dataDir, log: (l) => lines.push(l) });
  remote = await startRemoteAccess(daemon, {
    gatekeeper: gatekeeper.url,
    cloudflared: STANDIN,
    log: (l) => lines.push(l),
    supervisor: {
      env: {
        PATH: process.env.PATH,
        STANDIN_ORIGIN: daemon.url,
        STANDIN_PORT_FILE: portFile,
        STANDIN_HOSTNAME: `${fakeSubdomain(USER)}.overlays.test`,
      },
      backoff: { initialMs: 100 },
    },
  });
  return { daemon, remote, lines };
}

const publicPort = (file: string) => () =>
  readFile(file, 'utf8').then(
    (t) => Number(t.trim()) || undefined,
    () => undefined,
  );

describe('tunnel commands against the Gatekeeper', () => {
  it('up provisions with the licence, stores tunnel.json (0600); a second up reuses the same tunnel', async () => {
    await signIn();
    const first = await tunnelUp(ctx());
    expect(first.public_url).toBe(`https://${first.subdomain}.overlays.test`);
    expect(gatekeeper.requests.findLast((r) => r.path === '/tunnels/provision')?.authorization).toMatch(
      /^Bearer /,
    );
    expect((await stat(dataDirPaths(dataDir).tunnelFile)).mode & 0o777).toBe(0o600);
    const again = await tunnelUp(ctx());
    expect(again.tunnel_id).toBe(first.tunnel_id);
    expect(await tunnelStatusLines(ctx())).toEqual([
      `tunnel ${first.subdomain}: provisioned`,
      `public URL: ${first.public_url}`,
      // Local time, as every time the command line prints: "23:15" today, not an ISO time.
      expect.stringMatching(/^created: (\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}$/),
    ]);
  });

  it('down deletes it at the Gatekeeper and forgets it; status then says there is none', async () => {
    await signIn();
    await tunnelUp(ctx());
    await expect(tunnelDown(ctx())).resolves.toBe('deleted');
    expect(gatekeeper.tunnels.size).toBe(0);
    await expect(readTunnelFile(dataDirPaths(dataDir).tunnelFile)).resolves.toEqual({
      ok: true,
      record: undefined,
    });
    expect(await tunnelStatusLines(ctx())).toEqual([
      'No tunnel. Run "overlay-daemon tunnel up" to create one.',
    ]);
    await expect(tunnelDown(ctx())).resolves.toBe('none');
  });

  it('free tier: up is refused with the upgrade prompt; signed out: it says to log in', async () => {
    await expect(tunnelUp(ctx())).rejects.toThrow(/Not signed in\. Run "overlay-daemon login" first/);
    await signIn('free');
    const refused = tunnelUp(ctx());
    await expect(refused).rejects.toBeInstanceOf(TunnelCommandError);
    await expect(refused).rejects.toThrow(/Remote access needs Premium\. Become a Premium member/);
    // The bundled config names only the membership platform's home page: no link to it.
    await expect(refused).rejects.not.toThrow(/https?:\/\//);
    await expect(readTunnelFile(dataDirPaths(dataDir).tunnelFile)).resolves.toEqual({
      ok: true,
      record: undefined,
    });
  });

  /** `overlay-daemon tunnel up` with a cloudflared that is not installed: its exit code and what it printed. */
  async function tunnelUpWithoutCloudflared(): Promise<{ code: number; out: string[]; err: string[] }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runRemoteCommand(
      'tunnel',
      'up',
      {
        'data-dir': dataDir,
        gatekeeper: gatekeeper.url,
        cloudflared: join(dataDir, 'missing', 'cloudflared'),
      },
      { out: (t) => out.push(t), err: (t) => err.push(t) },
      async () => 0,
    );
    return { code, out, err };
  }

  it('`tunnel up` on the free tier says Premium is needed before asking for cloudflared', async () => {
    await signIn('free');
    const { code, err } = await tunnelUpWithoutCloudflared();
    expect(code).toBe(1);
    expect(err.join('')).toMatch(/Remote access needs Premium/);
    expect(err.join('')).not.toContain('cloudflared');
    expect(gatekeeper.tunnels.size).toBe(0);
  });

  it('`tunnel up` without cloudflared: one line saying how to install it, exit 1, nothing provisioned', async () => {
    await signIn();
    const { code, err } = await tunnelUpWithoutCloudflared();
    expect(code).toBe(1);
    expect(err).toHaveLength(1);
    expect(err[0]?.trim().split('\n')).toHaveLength(1);
    expect(err[0]).toContain(CLOUDFLARED_DOWNLOAD_URL);
    expect(gatekeeper.tunnels.size).toBe(0);
  });
});

describe('the daemon runs the connector', () => {
  it('connects after `tunnel up`, serves overlays on the tunnel host, refuses the control API there, and stops after `tunnel down`', async () => {
    await signIn();
    const portFile = join(dataDir, 'public.port');
    const { daemon: d, remote: r, lines } = await startWithRemoteAccess(portFile);
    expect(r.tunnel.status()).toEqual({ public_url: null, connector: 'stopped' });

    const record = await tunnelUp(ctx()); // as another process would: the daemon notices tunnel.json
    const port = await until(publicPort(portFile), 'the connector to listen');
    expect(d.tunnelHost).toBe(`${record.subdomain}.overlays.test`);
    expect(r.tunnel.status()).toEqual({ public_url: record.public_url, connector: 'running' });
    const [overlay] = d.overlays.list();
    expect(lines).toContain(
      `[tunnel] overlay "${overlay?.name}": ${record.public_url}/overlay/${overlay?.id}`,
    );

    const page = await get(port, `/overlay/${overlay?.id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('__APP_TOKEN__');
    // Through the tunnel /status is the interface's public view; the details are for local eyes only.
    expect(JSON.parse((await get(port, '/status')).body)).toEqual({ running: true, port: d.port });
    const status = JSON.parse((await get(d.port, '/status')).body);
    expect(status.licence).toMatchObject({ tier: 'premium', state: 'valid' });
    expect(status.tunnel).toMatchObject({ public_url: record.public_url, connector: 'running' });
    // The control API is local only: through the tunnel it does not exist, even with the admin key.
    const api = await get(port, '/api/overlays', { authorization: `Bearer ${d.adminKey}` });
    expect(api.status).toBe(404);

    await tunnelDown(ctx());
    await until(
      () => (r.tunnel.status().connector === 'stopped' ? true : undefined),
      'the connector to stop',
    );
    expect(d.tunnelHost).toBeUndefined();
    await expect(get(port, '/status')).rejects.toThrow();
  });

  it('a licence that turns free stops the connector; the overlays stay', async () => {
    await signIn();
    await tunnelUp(ctx());
    const portFile = join(dataDir, 'public.port');
    const { daemon: d, remote: r } = await startWithRemoteAccess(portFile);
    await until(publicPort(portFile), 'the connector to listen');
    const before = d.overlays.list().length;
    await r.firstCheck;
    gatekeeper.validateMode = 'membership_inactive';
    expect(await r.licence.refresh()).toMatchObject({ tier: 'free', state: 'inactive' });
    await until(
      () => (r.tunnel.status().connector === 'stopped' ? true : undefined),
      'the connector to stop',
    );
    expect(r.tunnel.status().reason).toMatch(/not part of the free tier/);
    expect(d.tunnelHost).toBeUndefined();
    expect(d.overlays.list().length).toBe(before);
  });

  it('`tunnel up` with no daemon running starts one in the foreground with the tunnel; Ctrl+C stops both', async () => {
    await signIn();
    const port = await freePort();
    const portFile = join(dataDir, 'public.port');
    const env = {
      STANDIN_ORIGIN: `http://127.0.0.1:${port}`,
      STANDIN_PORT_FILE: portFile,
      STANDIN_HOSTNAME: `${fakeSubdomain(USER)}.overlays.test`,
    };
    Object.assign(process.env, env);
    const out: string[] = [];
    let stop: (signal: string) => void = () => {};
    try {
      const exit = main(
        [
          'tunnel',
          'up',
          '--port',
          String(port),
          '--data-dir',
          dataDir,
          '--gatekeeper',
          gatekeeper.url,
          '--cloudflared',
          STANDIN,
        ],
        {
          out: (t) => out.push(t),
          err: (t) => out.push(t),
          stopSignal: () =>
            new Promise((r) => {
              stop = r;
            }),
        },
      );
      const publicSide = await until(publicPort(portFile), 'the connector to listen');
      const text = out.join('');
      expect(text).toContain(`Tunnel ready: https://${fakeSubdomain(USER)}.overlays.test`);
      expect(text).toContain('Starting the overlay daemon with the tunnel');
      expect(text).toContain(`listening on http://127.0.0.1:${port}`);
      expect((await get(publicSide, '/status')).status).toBe(200);
      stop('SIGINT');
      await expect(exit).resolves.toBe(0);
      await expect(get(publicSide, '/status')).rejects.toThrow(); // the connector went with the daemon
    } finally {
      for (const name of Object.keys(env)) delete process.env[name];
    }
  });
});
