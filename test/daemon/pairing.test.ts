// Pairing a phone: the streamer's offer (admin key), the phone's code and poll, approval, the device
// cookie, the limits on wrong codes, the device list and revocation, and a new admin key revoking all.
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../daemon/src/cli/main.js';
import { rotateAdminKey } from '../../daemon/src/store/data-dir.js';
import { api, type TestDaemon, waitFor } from '../support/daemon.js';
import type { FakeTimers } from '../support/fake-timers.js';
import { PHONE_IP, startTunnelledDaemon, TUNNEL, viaTunnel } from '../support/tunnel-phone.js';

let daemon: TestDaemon;
let clock: FakeTimers;

beforeEach(async () => {
  ({ daemon, clock } = await startTunnelledDaemon());
});
afterEach(async () => {
  await daemon.stop();
});

/** The phone's request through the tunnel: the tunnel's Host and the real client in CF-Connecting-IP. */
function phone(method: string, path: string, body?: unknown, ip = PHONE_IP) {
  return viaTunnel(daemon, method, path, { body, ip });
}

async function offer(role?: string): Promise<{ code: string; url: string; role: string; expiresAt: string }> {
  const res = await api(daemon, 'POST', '/api/pairings/offer', role ? { role } : {});
  expect(res.status).toBe(201);
  return (await res.json()) as { code: string; url: string; role: string; expiresAt: string };
}

async function pair(code: string, ip?: string): Promise<string> {
  const res = await phone('POST', '/pair', { code, deviceName: 'Phone' }, ip);
  expect(res.status).toBe(202);
  return (res.json() as { pairingId: string }).pairingId;
}

const cookieOf = (res: { headers: Record<string, string | string[] | undefined> }) => {
  const set = res.headers['set-cookie'];
  return Array.isArray(set) ? set[0] : set;
};

describe('the offer', () => {
  it('gives a 10-character base32 code, the tunnel URL, the role (moderator by default) and a 10-minute expiry', async () => {
    const made = await offer();
    expect(made.code).toMatch(/^[A-Z2-7]{10}$/);
    expect(made.url).toBe(`https://${TUNNEL}/pair#${made.code}`);
    expect(made.role).toBe('moderator');
    expect(Date.parse(made.expiresAt)).toBe(clock.now() + 10 * 60_000);
    expect((await offer('owner')).role).toBe('owner');
  });

  it('needs the admin key, a valid role, and a tunnel (409 with words without one)', async () => {
    const anonymous = await fetch(`${daemon.url}/api/pairings/offer`, { method: 'POST', body: '{}' });
    expect(anonymous.status).toBe(401);
    expect((await api(daemon, 'POST', '/api/pairings/offer', { role: 'admin' })).status).toBe(400);
    daemon.tunnelHost = undefined;
    const res = await api(daemon, 'POST', '/api/pairings/offer', {});
    expect(res.status).toBe(409);
    expect(JSON.stringify(await res.json())).toContain('tunnel');
  });
});

describe('pairing a phone', () => {
  it('waits for the streamer, then sets the device cookie once on the first poll after approval', async () => {
    const { code } = await offer();
    // Typed in lower case on the phone: codes are compared without case.
    const pairingId = await pair(code.toLowerCase());
    const waiting = (await (await api(daemon, 'GET', '/api/pairings')).json()) as Array<
      Record<string, unknown>
    >;
    expect(waiting).toEqual([
      {
        pairingId,
        deviceName: 'Phone',
        ip: '203.0.113.9',
        role: 'moderator',
        at: new Date(clock.now()).toISOString(),
      },
    ]);
    expect((await phone('GET', `/pair/${pairingId}`)).json()).toEqual({ state: 'waiting' });

    expect((await api(daemon, 'POST', `/api/pairings/${pairingId}/approve`, { role: 'owner' })).status).toBe(
      204,
    );
    expect(await (await api(daemon, 'GET', '/api/pairings')).json()).toEqual([]);
    const first = await phone('GET', `/pair/${pairingId}`);
    expect(first.json()).toEqual({ state: 'approved' });
    const cookie = cookieOf(first) ?? '';
    expect(cookie).toMatch(/^__Host-overlay_device=[A-Za-z0-9_-]{43}; /);
    const attributes = cookie.split('; ').slice(1);
    expect(attributes.sort()).toEqual(['HttpOnly', 'Path=/', 'SameSite=Strict', 'Secure']);
    const second = await phone('GET', `/pair/${pairingId}`);
    expect(second.json()).toEqual({ state: 'approved' });
    expect(second.headers['set-cookie']).toBeUndefined();

    const devices = (await (await api(daemon, 'GET', '/api/devices')).json()) as Array<
      Record<string, unknown>
    >;
    expect(devices).toEqual([
      expect.objectContaining({
        name: 'Phone',
        role: 'owner',
        createdAt: new Date(clock.now()).toISOString(),
      }),
    ]);
    expect(Object.keys(devices[0] ?? {}).sort()).toEqual([
      'createdAt',
      'id',
      'lastIp',
      'lastSeenAt',
      'name',
      'role',
    ]);

    // devices.json is private and holds the SHA-256 of the cookie value, never the value.
    const token = cookie.split(';')[0]?.split('=')[1] ?? '';
    const file = join(daemon.dataDir.root, 'devices.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(token);
    expect(text).toContain(createHash('sha256').update(token).digest('hex'));
  });

  it('approves with the role of the offer when none is given', async () => {
    const pairingId = await pair((await offer('owner')).code);
    expect((await api(daemon, 'POST', `/api/pairings/${pairingId}/approve`)).status).toBe(204);
    expect(await (await api(daemon, 'GET', '/api/devices')).json()).toEqual([
      expect.objectContaining({ role: 'owner' }),
    ]);
  });

  it('tells the phone it was refused, and makes no device', async () => {
    const pairingId = await pair((await offer()).code);
    expect((await api(daemon, 'POST', `/api/pairings/${pairingId}/refuse`)).status).toBe(204);
    const polled = await phone('GET', `/pair/${pairingId}`);
    expect(polled.json()).toEqual({ state: 'refused' });
    expect(polled.headers['set-cookie']).toBeUndefined();
    expect((await api(daemon, 'POST', `/api/pairings/${pairingId}/approve`)).status).toBe(404);
    expect(await (await api(daemon, 'GET', '/api/devices')).json()).toEqual([]);
  });

  it('tells the phone it expired when the streamer does not answer within the code`s 10 minutes', async () => {
    const pairingId = await pair((await offer()).code);
    clock.advance(10 * 60_000);
    expect((await phone('GET', `/pair/${pairingId}`)).json()).toEqual({ state: 'expired' });
    expect(await (await api(daemon, 'GET', '/api/pairings')).json()).toEqual([]);
    expect((await api(daemon, 'POST', `/api/pairings/${pairingId}/approve`)).status).toBe(404);
  });

  it('refuses wrong, spent and expired codes with 403 forbidden', async () => {
    const { code } = await offer();
    const wrong = await phone('POST', '/pair', { code: 'AAAAAAAAAA', deviceName: 'Phone' });
    expect(wrong.status).toBe(403);
    expect(wrong.json()).toEqual({ error: { code: 'forbidden', message: expect.any(String) } });
    await pair(code);
    expect((await phone('POST', '/pair', { code, deviceName: 'Phone' })).status).toBe(403);
    const late = await offer();
    clock.advance(10 * 60_000);
    expect((await phone('POST', '/pair', { code: late.code, deviceName: 'Phone' })).status).toBe(403);
    expect(await (await api(daemon, 'GET', '/api/pairings')).json()).toEqual([]);
  });

  it('validates the phone`s body (400) and answers 404 for an unknown pairing', async () => {
    expect((await phone('POST', '/pair', { code: 'AAAAAAAAAA' })).status).toBe(400);
    expect((await phone('POST', '/pair', 'not json')).status).toBe(400);
    expect((await phone('GET', '/pair/nope')).status).toBe(404);
  });
});

describe('limits on wrong codes', () => {
  it('allows 5 per minute per IP, then 429 even for a good code, until the minute is over', async () => {
    const { code } = await offer();
    for (let i = 0; i < 5; i++) {
      expect(
        (await phone('POST', '/pair', { code: 'AAAAAAAAAA', deviceName: 'x' }, '198.51.100.1')).status,
      ).toBe(403);
    }
    const blocked = await phone('POST', '/pair', { code, deviceName: 'x' }, '198.51.100.1');
    expect(blocked.status).toBe(429);
    expect(blocked.headers['retry-after']).toBe('60');
    // Another address is not held back.
    expect(
      (await phone('POST', '/pair', { code: 'AAAAAAAAAA', deviceName: 'x' }, '198.51.100.2')).status,
    ).toBe(403);
    clock.advance(60_000);
    await pair(code, '198.51.100.1');
  });

  /** 30 wrong codes, 5 from each of 6 addresses (within each address's own limit). */
  async function thirtyWrongCodes(): Promise<void> {
    for (let ip = 1; ip <= 6; ip++) {
      for (let i = 0; i < 5; i++) {
        const res = await phone('POST', '/pair', { code: 'AAAAAAAAAA', deviceName: 'x' }, `198.51.100.${ip}`);
        expect(res.status).toBe(403);
      }
      clock.advance(1000);
    }
  }

  it('allows 30 against the open offers, then every POST /pair is 429 until the hour is over', async () => {
    const { code } = await offer();
    await thirtyWrongCodes();
    const closed = await phone('POST', '/pair', { code, deviceName: 'x' }, '192.0.2.77');
    expect(closed.status).toBe(429);
    expect(Number(closed.headers['retry-after'])).toBe(60 * 60 - 6);
    clock.advance(60 * 60_000 - 6000 - 1);
    expect((await phone('POST', '/pair', { code: 'x', deviceName: 'x' }, '192.0.2.78')).status).toBe(429);
    clock.advance(1);
    await pair((await offer()).code, '192.0.2.77');
  });

  it('a new offer by the streamer starts afresh after 30 wrong codes', async () => {
    await offer();
    await thirtyWrongCodes();
    // The offer the codes were aimed at is spent; the streamer's next one pairs at once.
    await pair((await offer()).code, '192.0.2.77');
  });

  it('wrong codes while no offer is open close nothing: the streamer`s next offer pairs', async () => {
    await thirtyWrongCodes();
    await pair((await offer()).code, '192.0.2.77');
  });
});

describe('pairing the same phone again', () => {
  /** The phone's browser pairs, sending `cookie` (its cookie of an earlier pairing) along; its new cookie. */
  async function pairBrowser(name: string, cookie?: string): Promise<string> {
    const headers: Record<string, string> = cookie ? { Cookie: cookie } : {};
    const { code } = await offer();
    const asked = await viaTunnel(daemon, 'POST', '/pair', { body: { code, deviceName: name }, headers });
    expect(asked.status).toBe(202);
    const { pairingId } = asked.json() as { pairingId: string };
    expect((await api(daemon, 'POST', `/api/pairings/${pairingId}/approve`)).status).toBe(204);
    const polled = await viaTunnel(daemon, 'GET', `/pair/${pairingId}`, { headers });
    return cookieOf(polled)?.split(';')[0] ?? '';
  }
  const session = (cookie: string) =>
    viaTunnel(daemon, 'GET', '/api/session', { headers: { Cookie: cookie } });
  const listed = async () =>
    ((await (await api(daemon, 'GET', '/api/devices')).json()) as { name: string }[]).map((d) => d.name);

  it('replaces the device it was paired as: the old one leaves the list and its cookie is refused', async () => {
    const other = await pairBrowser('Tablet');
    const old = await pairBrowser('Phone');
    expect((await session(old)).status).toBe(200);
    const renewed = await pairBrowser('Phone (new)', old);
    expect(renewed).not.toBe(old);
    expect(await listed()).toEqual(['Tablet', 'Phone (new)']);
    expect((await session(old)).status).toBe(401);
    expect((await session(renewed)).status).toBe(200);
    expect((await session(other)).status).toBe(200);
  });

  it('a revoked cookie sent along replaces nothing', async () => {
    const old = await pairBrowser('Phone');
    const id = (await (await api(daemon, 'GET', '/api/devices')).json()) as { id: string }[];
    expect((await api(daemon, 'DELETE', `/api/devices/${id[0]?.id}`)).status).toBe(204);
    const other = await pairBrowser('Tablet');
    await pairBrowser('Phone', old);
    expect(await listed()).toEqual(['Tablet', 'Phone']);
    expect((await session(other)).status).toBe(200);
  });
});

describe('devices', () => {
  async function paired(name: string): Promise<string> {
    const res = await phone('POST', '/pair', { code: (await offer()).code, deviceName: name });
    const pairingId = (res.json() as { pairingId: string }).pairingId;
    await api(daemon, 'POST', `/api/pairings/${pairingId}/approve`);
    const devices = (await (await api(daemon, 'GET', '/api/devices')).json()) as Array<{
      id: string;
      name: string;
    }>;
    return devices.find((d) => d.name === name)?.id ?? '';
  }

  it('DELETE /api/devices/:id revokes at once: the device leaves the list and devices.json', async () => {
    const id = await paired('Phone');
    await paired('Laptop');
    expect((await fetch(`${daemon.url}/api/devices/${id}`, { method: 'DELETE' })).status).toBe(401);
    expect((await api(daemon, 'DELETE', `/api/devices/${id}`)).status).toBe(204);
    expect(await (await api(daemon, 'GET', '/api/devices')).json()).toEqual([
      expect.objectContaining({ name: 'Laptop' }),
    ]);
    expect(await readFile(join(daemon.dataDir.root, 'devices.json'), 'utf8')).not.toContain(id);
    expect((await api(daemon, 'DELETE', `/api/devices/${id}`)).status).toBe(404);
  });

  it('a new admin key (overlay-daemon new-key) revokes every device', async () => {
    await paired('Phone');
    await paired('Laptop');
    const old = daemon.adminKey;
    await rotateAdminKey(daemon.dataDir);
    await waitFor(() => daemon.adminKey !== old);
    expect(await (await api(daemon, 'GET', '/api/devices')).json()).toEqual([]);
    await waitFor(
      async () => !(await readFile(join(daemon.dataDir.root, 'devices.json'), 'utf8')).includes('Phone'),
    );
  });
});

describe('the command line', () => {
  function cli(answer = 'y') {
    const io = {
      output: '',
      errors: '',
      out: (text: string) => {
        io.output += text;
      },
      err: (text: string) => {
        io.errors += text;
      },
      stopSignal: () => new Promise<string>(() => {}),
      ask: async () => answer,
      pollMs: 10,
      now: () => clock.now(),
    };
    return io;
  }

  it('overlay-daemon pair prints the code, the URL and a QR code, then approves the phone on "y"', async () => {
    const io = cli('y');
    const running = main(['pair', '--role', 'owner', '--data-dir', daemon.dataDir.root], io);
    await waitFor(() => io.output.includes('Waiting for the phone'));
    const code = /Pairing code: ([A-Z2-7]{10})/.exec(io.output)?.[1] ?? '';
    expect(io.output).toContain(`https://${TUNNEL}/pair#${code}`);
    // How long and until when, in local time as `overlay-daemon status` says times.
    const until = /\(owner, valid for 10 minutes, until (?:\d{4}-\d{2}-\d{2} )?(\d{2}):(\d{2}), once\)/.exec(
      io.output,
    );
    expect(until, io.output).not.toBeNull();
    const expires = new Date(clock.now() + 10 * 60_000);
    const minutes = Number(until![1]) * 60 + Number(until![2]);
    const expected = expires.getHours() * 60 + expires.getMinutes();
    expect(Math.abs(((minutes - expected + 1440 + 720) % 1440) - 720)).toBeLessThanOrEqual(1);
    expect(io.output).toMatch(/[▀▄█]/);
    const pairingId = await pair(code);
    expect(await running).toBe(0);
    expect(io.output).toContain('Paired "Phone" as owner');
    expect(cookieOf(await phone('GET', `/pair/${pairingId}`))).toMatch(/^__Host-overlay_device=/);
  });

  it('overlay-daemon pair refuses the phone on anything but "y"', async () => {
    const io = cli('');
    const running = main(['pair', '--data-dir', daemon.dataDir.root], io);
    await waitFor(() => io.output.includes('Waiting for the phone'));
    const pairingId = await pair(/Pairing code: ([A-Z2-7]{10})/.exec(io.output)?.[1] ?? '');
    expect(await running).toBe(1);
    expect((await phone('GET', `/pair/${pairingId}`)).json()).toEqual({ state: 'refused' });
  });

  it('overlay-daemon devices lists the devices and --revoke ID revokes one', async () => {
    const empty = cli();
    expect(await main(['devices', '--data-dir', daemon.dataDir.root], empty)).toBe(0);
    expect(empty.output).toContain('No paired devices');

    const pairingId = await pair((await offer()).code);
    await api(daemon, 'POST', `/api/pairings/${pairingId}/approve`);
    const listed = cli();
    expect(await main(['devices', '--data-dir', daemon.dataDir.root], listed)).toBe(0);
    const id =
      ((await (await api(daemon, 'GET', '/api/devices')).json()) as Array<{ id: string }>)[0]?.id ?? '';
    expect(listed.output).toContain(`${id}  Phone  moderator  last seen never`);

    const revoke = cli();
    expect(await main(['devices', '--revoke', id, '--data-dir', daemon.dataDir.root], revoke)).toBe(0);
    expect(revoke.output).toContain(`Device ${id} revoked`);
    expect(await (await api(daemon, 'GET', '/api/devices')).json()).toEqual([]);
    const again = cli();
    expect(await main(['devices', '--revoke', id, '--data-dir', daemon.dataDir.root], again)).toBe(1);
    expect(again.errors).toContain('no paired device');
  });

  it('overlay-daemon new-key revokes every device', async () => {
    const pairingId = await pair((await offer()).code);
    await api(daemon, 'POST', `/api/pairings/${pairingId}/approve`);
    const io = cli();
    expect(await main(['new-key', '--data-dir', daemon.dataDir.root], io)).toBe(0);
    expect(io.output).toContain('1 paired device(s) revoked');
    await waitFor(
      async () => ((await (await api(daemon, 'GET', '/api/devices')).json()) as unknown[]).length === 0,
    );
  });
});
