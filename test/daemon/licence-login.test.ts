import { readFile, rm, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { browserCommand, openBrowser } from '../../daemon/src/cli/open-browser.js';
import { runRemoteCommand } from '../../daemon/src/cli/remote.js';
import { startDaemon } from '../../daemon/src/daemon.js';
import { GatekeeperClient } from '../../daemon/src/licence/gatekeeper-client.js';
import { decodeJwtPayload } from '../../daemon/src/licence/jwt-payload.js';
import { readLicence, writeLicence } from '../../daemon/src/licence/licence-file.js';
import { LoginError, login, logout } from '../../daemon/src/licence/login.js';
import { listenForAuthCode } from '../../daemon/src/licence/loopback-listener.js';
import { startRemoteAccess } from '../../daemon/src/remote-access.js';
import { makeDataDir } from '../support/daemon.js';
import { type FakeGatekeeper, startFakeGatekeeper } from '../support/fakes/gatekeeper.js';
import { licenceSigner, trustSigner } from '../support/licence-signer.js';
import { freePort } from '../support/local-stack.js';
import { waitFor } from '../support/wait.js';

let gatekeeper: FakeGatekeeper;
const dataDirs: string[] = [];
beforeAll(async () => {
  gatekeeper = await startFakeGatekeeper({ userId: 'patron-42' });
});
afterAll(async () => {
  await gatekeeper?.close();
  await Promise.all(dataDirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDataDir(): Promise<string> {
  const dir = await makeDataDir();
  dataDirs.push(dir);
  return dir;
}

/** A raw GET, so the Host header is exactly what a browser would send (fetch would not let us change it). */
function get(
  port: number,
  path: string,
  host = `127.0.0.1:${port}`,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends one raw request line over TCP (no client would let us send a malformed target) and returns the status line. */
function rawStatusLine(port: number, requestLine: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`${requestLine}\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    });
    let received = '';
    socket.setEncoding('utf8');
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('end', () => resolve(received.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}

/** Plays the browser: follows the Gatekeeper's redirect to the loopback listener. */
async function browser(url: string): Promise<boolean> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(await res.text()).toContain('You can close this tab');
  return true;
}

describe('loopback listener for the sign-in redirect', () => {
  const listeners: Awaited<ReturnType<typeof listenForAuthCode>>[] = [];
  afterEach(() => {
    for (const l of listeners.splice(0)) l.close();
  });

  it('answers 404 on another path, 400 without a code, and keeps waiting for the real redirect', async () => {
    const listener = await listenForAuthCode();
    listeners.push(listener);
    expect((await get(listener.port, '/')).status).toBe(404);
    expect((await get(listener.port, '/auth/done/../admin')).status).toBe(404);
    expect((await get(listener.port, '/auth/done')).status).toBe(400);
    const done = await get(listener.port, '/auth/done?code=abc123');
    expect(done.status).toBe(200);
    expect(done.body).toContain('You can close this tab');
    await expect(listener.code).resolves.toBe('abc123');
  });

  it('answers 400 to a request target that is not a URL, and keeps waiting for the real redirect', async () => {
    const listener = await listenForAuthCode();
    listeners.push(listener);
    expect(await rawStatusLine(listener.port, 'GET http://[ HTTP/1.1')).toMatch(/^HTTP\/1\.1 400 /);
    const done = await get(listener.port, '/auth/done?code=after-junk');
    expect(done.status).toBe(200);
    await expect(listener.code).resolves.toBe('after-junk');
  });

  it('is one-shot: after the first code the port no longer answers', async () => {
    const listener = await listenForAuthCode();
    listeners.push(listener);
    await get(listener.port, '/auth/done?code=first');
    await expect(listener.code).resolves.toBe('first');
    await expect(get(listener.port, '/auth/done?code=second')).rejects.toThrow(
      /ECONNREFUSED|socket hang up|ECONNRESET/,
    );
  });

  it('refuses a request whose Host is not the loopback address it handed out (DNS rebinding)', async () => {
    const listener = await listenForAuthCode();
    listeners.push(listener);
    expect((await get(listener.port, '/auth/done?code=evil', 'attacker.example')).status).toBe(403);
    expect((await get(listener.port, '/auth/done?code=good')).status).toBe(200);
    await expect(listener.code).resolves.toBe('good');
  });

  it('gives up after its timeout and closes the port', async () => {
    const listener = await listenForAuthCode({ timeoutMs: 100 });
    await expect(listener.code).rejects.toThrow(/No sign-in arrived/);
    await expect(get(listener.port, '/auth/done?code=late')).rejects.toThrow();
  });
});

describe('overlay-daemon login / logout', () => {
  it('signs in through the browser, exchanges the code and stores the licence with mode 0600', async () => {
    const dataDir = await tempDataDir();
    const licenceFile = join(dataDir, 'license.json');
    const client = new GatekeeperClient(gatekeeper.url);
    const lines: string[] = [];
    let opened = '';
    const record = await login({
      client,
      licenceFile,
      openUrl: (url) => {
        opened = url;
        return browser(url);
      },
      log: (line) => lines.push(line),
    });
    // PKCE: a fresh S256 challenge on every login.
    expect(opened).toMatch(
      new RegExp(
        `^${gatekeeper.url}/auth/membership\\?redirect_port=\\d+&code_challenge=[A-Za-z0-9_-]{43}&code_challenge_method=S256$`,
      ),
    );
    expect(lines.join('\n')).toContain(opened); // printed too, for when no browser opens
    expect(record).toMatchObject({ tier: 'premium', user_id: 'patron-42', verdict: 'ok' });
    expect(gatekeeper.requests.some((r) => r.method === 'POST' && r.path === '/auth/exchange')).toBe(true);

    const stored = await readLicence(licenceFile);
    expect(stored.ok && stored.record?.token).toBe(record.token);
    expect(decodeJwtPayload(record.token)?.sub).toBe('patron-42');
    expect((await stat(licenceFile)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(licenceFile, 'utf8')).validated_at).toMatch(/^\d{4}-\d\d-\d\dT/);

    // Logout revokes at the Gatekeeper first (POST /auth/logout with the licence), then removes the file.
    await expect(logout(licenceFile, client)).resolves.toEqual({ removed: true, revoked: true });
    expect(gatekeeper.loggedOut.has('patron-42')).toBe(true);
    expect(
      gatekeeper.requests.find((r) => r.method === 'POST' && r.path === '/auth/logout')?.authorization,
    ).toBe(`Bearer ${record.token}`);
    await expect(readLicence(licenceFile)).resolves.toEqual({ ok: true, record: undefined });
    await expect(logout(licenceFile, client)).resolves.toEqual({ removed: false, revoked: false });
  });

  it('logout offline still removes the licence, and says it could not revoke it', async () => {
    const dataDir = await tempDataDir();
    const licenceFile = join(dataDir, 'license.json');
    await login({
      client: new GatekeeperClient(gatekeeper.url),
      licenceFile,
      openUrl: browser,
      log: () => {},
    });
    const offline = new GatekeeperClient('http://127.0.0.1:9', { timeoutMs: 2000 });
    const outcome = await logout(licenceFile, offline);
    expect(outcome).toMatchObject({ removed: true, revoked: false });
    expect(outcome.reason).toBeTruthy();
    await expect(readLicence(licenceFile)).resolves.toEqual({ ok: true, record: undefined });
  });

  it("refuses an injected code: another page's login code sent to the listener is not exchanged", async () => {
    const dataDir = await tempDataDir();
    const licenceFile = join(dataDir, 'license.json');
    const pending = login({
      client: new GatekeeperClient(gatekeeper.url),
      licenceFile,
      // The attacker runs a login of their own (without the daemon's challenge) and sends its code to the
      // daemon's loopback listener before the streamer's browser comes back.
      openUrl: async (url) => {
        const port = new URL(url).searchParams.get('redirect_port');
        const own = await fetch(`${gatekeeper.url}/auth/membership?redirect_port=1`, { redirect: 'manual' });
        const code = new URL(own.headers.get('Location') ?? '').searchParams.get('code');
        await fetch(`http://127.0.0.1:${port}/auth/done?code=${code}`);
        return true;
      },
      log: () => {},
    });
    await expect(pending).rejects.toThrow(/invalid_code/);
    await expect(readLicence(licenceFile)).resolves.toEqual({ ok: true, record: undefined });
  });

  it('overlay-daemon login says the tier the daemon concludes, with keys cached from an earlier Gatekeeper key', async () => {
    const dataDir = await tempDataDir();
    // A key of an earlier run of the Gatekeeper, under the same kid, cached as the daemon caches it.
    await trustSigner(dataDir, licenceSigner('fake-gatekeeper'));
    const out: string[] = [];
    const io = { out: (t: string) => out.push(t), err: (t: string) => out.push(t), openUrl: browser };
    const closed = String(await freePort());
    const values = { 'data-dir': dataDir, gatekeeper: gatekeeper.url, port: closed };
    expect(await runRemoteCommand('login', undefined, values, io, async () => 1)).toBe(0);
    const text = out.join('');
    expect(text).toContain(`Signed in (user patron-42). Licence stored in ${dataDir}.\n`);
    expect(text).toMatch(/The overlay daemon now has: premium tier, valid, until [\d: -]+\.\n/);

    // A Gatekeeper whose published keys do not verify its licences: the daemon stays free, and says why.
    gatekeeper.publishedJwks = licenceSigner('fake-gatekeeper').jwks;
    try {
      const second: string[] = [];
      const io2 = { ...io, out: (t: string) => second.push(t) };
      const fresh = { ...values, 'data-dir': await tempDataDir() };
      expect(await runRemoteCommand('login', undefined, fresh, io2, async () => 1)).toBe(1);
      expect(second.join('')).toContain(
        'The licence does not verify on this computer (its signature does not verify): the overlay daemon stays on the free tier.\n',
      );
      expect(second.join('')).not.toMatch(/premium tier/);
    } finally {
      gatekeeper.publishedJwks = undefined;
    }
  });

  it('overlay-daemon login says what the running daemon has once it took the licence up, after a key made afresh under the same kid', async () => {
    const dataDir = await tempDataDir();
    // The daemon runs with a licence of an earlier Gatekeeper key under the same kid, verified and cached.
    const earlier = licenceSigner('fake-gatekeeper');
    await trustSigner(dataDir, earlier);
    await writeLicence(join(dataDir, 'license.json'), {
      token: earlier.sign({ sub: 'patron-42', tier: 'premium', iss: gatekeeper.url }),
      tier: 'premium',
      validated_at: new Date().toISOString(),
      user_id: 'patron-42',
      verdict: 'ok',
    });
    gatekeeper.validateMode = 'unreachable';
    const daemon = await startDaemon({ port: 0, host: '127.0.0.1', dataDir, log: () => {} });
    const remote = await startRemoteAccess(daemon, {
      gatekeeper: gatekeeper.url,
      log: () => {},
    });
    try {
      expect((await remote.firstCheck).tier).toBe('premium');
      gatekeeper.validateMode = 'ok';
      const out: string[] = [];
      const io = { out: (t: string) => out.push(t), err: (t: string) => out.push(t), openUrl: browser };
      const values = { 'data-dir': dataDir, gatekeeper: gatekeeper.url };
      expect(await runRemoteCommand('login', undefined, values, io, async () => 1)).toBe(0);
      expect(out.join('')).toMatch(
        new RegExp(
          `The running overlay daemon \\(${daemon.url}\\) says: premium tier, valid, until [\\d: -]+\\.\\n`,
        ),
      );
      expect(remote.licence.status()).toMatchObject({ tier: 'premium', state: 'valid' });
    } finally {
      gatekeeper.validateMode = 'ok';
      await remote.close();
      await daemon.close();
    }
  });

  it('prints the URL and still completes when no browser can be started', async () => {
    const dataDir = await tempDataDir();
    const lines: string[] = [];
    const pending = login({
      client: new GatekeeperClient(gatekeeper.url),
      licenceFile: join(dataDir, 'license.json'),
      openUrl: async () => false,
      log: (line) => lines.push(line),
    });
    // The user copies the printed address into a browser by hand.
    await waitFor(() => lines.some((l) => l.includes('/auth/membership')), 5000, 'the printed address');
    const url = /https?:\/\/\S+/.exec(lines.join('\n'))?.[0] ?? '';
    expect(lines.join('\n')).toContain('Could not start a browser');
    // It says what it waits for, and for how long.
    expect(lines.join('\n')).toContain('Waiting for the sign-in to finish in the browser (up to 5 minutes');
    await browser(url);
    await expect(pending).resolves.toMatchObject({ tier: 'premium' });
  });

  it('checks first that the Gatekeeper answers, and says so plainly when it does not, opening nothing', async () => {
    const dataDir = await tempDataDir();
    let opened = false;
    // A port nothing listens on: the Gatekeeper is not there.
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const pending = login({
      client: new GatekeeperClient(nowhere),
      licenceFile: join(dataDir, 'license.json'),
      openUrl: async () => {
        opened = true;
        return true;
      },
      log: () => {},
    });
    await expect(pending).rejects.toThrow(LoginError);
    await expect(pending).rejects.toThrow(`The Gatekeeper at ${nowhere} does not answer`);
    await expect(pending).rejects.toThrow(/--gatekeeper \/ \$OVERLAY_GATEKEEPER_URL/);
    expect(opened).toBe(false);
  });

  it('reports a refused code without writing a licence', async () => {
    const dataDir = await tempDataDir();
    const licenceFile = join(dataDir, 'license.json');
    const pending = login({
      client: new GatekeeperClient(gatekeeper.url),
      licenceFile,
      // A redirect carrying a code the Gatekeeper never issued (or one already used).
      openUrl: async (url) => {
        const port = new URL(url).searchParams.get('redirect_port');
        await fetch(`http://127.0.0.1:${port}/auth/done?code=not-issued`);
        return true;
      },
      log: () => {},
    });
    await expect(pending).rejects.toThrow(LoginError);
    await expect(pending).rejects.toThrow(/invalid_code/);
    await expect(readLicence(licenceFile)).resolves.toEqual({ ok: true, record: undefined });
  });
});

describe('opening the system browser', () => {
  const url = 'http://127.0.0.1:8787/auth/membership?redirect_port=5000&x=a&b=c';

  it('passes the URL as one argument to the opener, never through a shell that would split it at &', () => {
    expect(browserCommand(url, 'linux')).toEqual(['xdg-open', [url]]);
    expect(browserCommand(url, 'darwin')).toEqual(['open', [url]]);
    expect(browserCommand(url, 'win32')).toEqual(['rundll32', ['url.dll,FileProtocolHandler', url]]);
  });

  it('reports false, without throwing, when there is no opener or the URL is not http(s)', async () => {
    await expect(openBrowser('file:///etc/passwd')).resolves.toBe(false);
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      await expect(openBrowser(url, 'linux')).resolves.toBe(false);
    } finally {
      process.env.PATH = path;
    }
  });
});
