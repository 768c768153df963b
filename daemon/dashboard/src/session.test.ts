import { afterEach, describe, expect, it, vi } from 'vitest';
import { isLoopbackHost, lookUpDeviceSession, sessionOutcome } from './session.js';

const session = { deviceId: 'd1', name: 'Sam’s phone', role: 'moderator', csrf: 'c'.repeat(43) };

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('a page opened without the admin key', () => {
  it('is the paired device GET /api/session names', () => {
    expect(sessionOutcome(200, session, 'o-abc.overlays.test')).toEqual({ kind: 'device', session });
  });

  it('is signed out when the tunnel answers 401 (the device was revoked)', () => {
    expect(sessionOutcome(401, { error: { code: 'unauthenticated' } }, 'o-abc.overlays.test')).toEqual({
      kind: 'signed-out',
    });
  });

  it('needs the sign-in URL on this computer, where 401 only means no key was sent', () => {
    for (const host of ['127.0.0.1', 'localhost', '[::1]', 'dash.localhost']) {
      expect(isLoopbackHost(host)).toBe(true);
      expect(sessionOutcome(401, undefined, host)).toEqual({ kind: 'none' });
    }
    expect(isLoopbackHost('o-abc.overlays.test')).toBe(false);
  });

  it('needs the sign-in URL when there is no session (404) or the answer is not one', () => {
    expect(sessionOutcome(404, undefined, 'o-abc.overlays.test')).toEqual({ kind: 'none' });
    expect(sessionOutcome(200, { ...session, role: 'admin' }, 'o-abc.overlays.test')).toEqual({
      kind: 'none',
    });
  });

  it('asks with the cookie and no key, and treats an unreachable daemon as no session', async () => {
    const calls: [string, RequestInit][] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      calls.push([url, init]);
      return new Response(JSON.stringify(session), { status: 200 });
    });
    expect(await lookUpDeviceSession('o-abc.overlays.test')).toEqual({ kind: 'device', session });
    expect(calls[0]?.[0]).toBe('/api/session');
    expect(calls[0]?.[1]).toMatchObject({ credentials: 'same-origin' });
    expect(calls[0]?.[1].headers).toBeUndefined();

    vi.stubGlobal('fetch', async () => {
      throw new TypeError('Failed to fetch');
    });
    expect(await lookUpDeviceSession('o-abc.overlays.test')).toEqual({ kind: 'none' });
  });
});
