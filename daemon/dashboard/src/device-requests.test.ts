// The control API client speaking for a paired device: no key, the CSRF header on changes, the local status.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeviceSession } from '../../../shared/protocol/devices.js';
import { ControlApi, credentialHeaders } from './api.js';

interface Sent {
  url: string;
  init: RequestInit;
  headers: Record<string, string>;
}

let sent: Sent[];

function daemon(answer: (request: Sent) => Response): void {
  sent = [];
  vi.stubGlobal('fetch', async (url: string, init: RequestInit = {}) => {
    const request = { url, init, headers: { ...(init.headers as Record<string, string>) } };
    sent.push(request);
    return answer(request);
  });
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

const moderator: DeviceSession = { deviceId: 'd1', name: 'Sam’s phone', role: 'moderator', csrf: 'csrf-1' };

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the request headers', () => {
  it('carry the admin key as a Bearer on every request', () => {
    expect(credentialHeaders('k', 'GET')).toEqual({ Authorization: 'Bearer k' });
    expect(credentialHeaders('k', 'POST')).toEqual({ Authorization: 'Bearer k' });
  });

  it('carry no key for a device, and its CSRF value on every request but a read', () => {
    expect(credentialHeaders(moderator, 'GET')).toEqual({});
    expect(credentialHeaders(moderator, 'HEAD')).toEqual({});
    for (const method of ['POST', 'PUT', 'DELETE', 'patch']) {
      expect(credentialHeaders(moderator, method)).toEqual({ 'X-Overlay-CSRF': 'csrf-1' });
    }
  });
});

describe('the control API client of a paired device', () => {
  it('skips a queue with the CSRF header, sends the cookie, and never an Authorization header', async () => {
    daemon(() => json(200, { name: 'camera', running: false, waiting: 0 }));
    const api = new ControlApi(moderator);
    await api.queue('camera', 'skip');
    expect(sent[0]?.url).toBe('/api/actions/queues/camera/skip');
    expect(sent[0]?.init).toMatchObject({ method: 'POST', credentials: 'same-origin' });
    expect(sent[0]?.headers).toEqual({ 'X-Overlay-CSRF': 'csrf-1' });
  });

  it('reads the log without the CSRF header', async () => {
    daemon(() => json(200, []));
    await new ControlApi(moderator).actionLog();
    expect(sent[0]?.headers).toEqual({});
  });

  it('reads the local status at /api/status (through the tunnel /status is the public view)', async () => {
    daemon(() => json(200, { running: true, port: 7890 }));
    await new ControlApi(moderator).status();
    await new ControlApi(moderator).relay();
    expect(sent.map((s) => s.url)).toEqual(['/api/status', '/api/status']);
    daemon(() => json(200, { running: true, port: 7890 }));
    await new ControlApi('k').status();
    expect(sent[0]?.url).toBe('/status');
  });

  it('says the device was revoked on the first 401, downloads included', async () => {
    daemon(() => json(401, { error: { code: 'unauthenticated', message: 'revoked' } }));
    const api = new ControlApi(moderator);
    const revoked: number[] = [];
    api.onUnauthorized = (error) => revoked.push(error.status);
    await expect(api.actionQueues()).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });
    await expect(api.download('/api/sessions/1/events.csv')).rejects.toMatchObject({ status: 401 });
    expect(revoked).toEqual([401, 401]);
  });

  it('knows its role: what it may call, and that secrets are not its to change', () => {
    const api = new ControlApi(moderator);
    expect(api.signer).toBe('moderator');
    expect(api.allows('POST', '/api/events?test=true')).toBe(true);
    expect(api.allows('PUT', '/api/rules')).toBe(false);
    const owner = new ControlApi({ ...moderator, role: 'owner' });
    expect(owner.allows('PUT', '/api/rules')).toBe(true);
    expect(owner.allows('GET', '/api/devices')).toBe(false);
    expect(owner.changesSecrets).toBe(false);
    expect(new ControlApi('k').changesSecrets).toBe(true);
  });
});
