import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { dashboardSignInUrl, isLocalDashboardClient } from './dashboard.js';

const request = (host: string | undefined, remoteAddress: string): IncomingMessage => {
  // Only the two properties the check reads; a real IncomingMessage needs a socket.
  const req = { headers: host === undefined ? {} : { host }, socket: { remoteAddress } };
  return req as unknown as IncomingMessage;
};

describe('isLocalDashboardClient', () => {
  it('accepts a loopback peer that named a loopback host', () => {
    expect(isLocalDashboardClient(request('127.0.0.1:7890', '127.0.0.1'))).toBe(true);
    expect(isLocalDashboardClient(request('localhost:7890', '::ffff:127.0.0.1'))).toBe(true);
    expect(isLocalDashboardClient(request('[::1]:7890', '::1'))).toBe(true);
    expect(isLocalDashboardClient(request('LOCALHOST', '127.0.0.5'))).toBe(true);
  });

  it('refuses the tunnel (loopback peer, public Host), other machines and a missing Host', () => {
    expect(isLocalDashboardClient(request('o-abc.overlays.example', '127.0.0.1'))).toBe(false);
    expect(isLocalDashboardClient(request('127.0.0.1:7890', '192.168.1.20'))).toBe(false);
    expect(isLocalDashboardClient(request('localhost.evil.example', '127.0.0.1'))).toBe(false);
    expect(isLocalDashboardClient(request(undefined, '127.0.0.1'))).toBe(false);
  });
});

describe('dashboardSignInUrl', () => {
  it('puts the key in the fragment, never in the path or query', () => {
    const url = new URL(dashboardSignInUrl('http://127.0.0.1:7890/', 'a+b/c=\n'));
    expect(url.pathname).toBe('/dashboard');
    expect(url.search).toBe('');
    expect(new URLSearchParams(url.hash.slice(1)).get('key')).toBe('a+b/c=');
  });
});
