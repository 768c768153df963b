// Unit tests of the Host, Origin and client-IP rules (decisions §3).
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { classifyHost, clientIp, isLocalControlClient, originAllowed } from './policy.js';

function fakeRequest(remoteAddress: string, headers: Record<string, string>): IncomingMessage {
  const socket = new Socket();
  Object.defineProperty(socket, 'remoteAddress', { value: remoteAddress });
  const req = new IncomingMessage(socket);
  req.headers = headers;
  return req;
}

describe('classifyHost', () => {
  it.each([
    ['localhost:7890', 'local'],
    ['127.0.0.1', 'local'],
    ['[::1]:1', 'local'],
    ['O-ABC.tunnel.example', 'tunnel'],
    ['evil.example', undefined],
    ['127.0.0.1.evil.example', undefined],
    ['localhost:port', undefined],
    ['', undefined],
  ])('%s → %s', (host, kind) => {
    expect(classifyHost(host, 'o-abc.tunnel.example')).toBe(kind);
  });
});

describe('originAllowed', () => {
  it.each([
    ['http://localhost:5173', true],
    ['https://[::1]', true],
    ['https://o-abc.tunnel.example', true],
    ['http://o-abc.tunnel.example', false],
    ['http://localhost:5173/path', false],
    ['null', false],
    ['ws://localhost', false],
  ])('%s → %s', (origin, allowed) => {
    expect(originAllowed(origin, 'o-abc.tunnel.example')).toBe(allowed);
  });
});

describe('clientIp and control access', () => {
  it('believes CF-Connecting-IP only from loopback with the tunnel Host', () => {
    const headers = { 'cf-connecting-ip': '203.0.113.7' };
    expect(clientIp(fakeRequest('127.0.0.1', headers), 'tunnel')).toBe('203.0.113.7');
    expect(clientIp(fakeRequest('127.0.0.1', headers), 'local')).toBe('127.0.0.1');
    expect(clientIp(fakeRequest('192.168.1.20', headers), 'tunnel')).toBe('192.168.1.20');
    expect(clientIp(fakeRequest('::ffff:127.0.0.1', { 'cf-connecting-ip': 'junk' }), 'tunnel')).toBe(
      '127.0.0.1',
    );
  });

  it('answers the control API only for a loopback peer with a loopback Host', () => {
    expect(isLocalControlClient(fakeRequest('127.0.0.1', {}), 'local')).toBe(true);
    expect(isLocalControlClient(fakeRequest('::1', {}), 'local')).toBe(true);
    expect(isLocalControlClient(fakeRequest('192.168.1.20', {}), 'local')).toBe(false);
    expect(isLocalControlClient(fakeRequest('127.0.0.1', {}), 'tunnel')).toBe(false);
  });
});

describe('ipv6Slash64', () => {
  it('keys every address of one /64 alike, and other /64s apart', async () => {
    const { ipv6Slash64 } = await import('./policy.js');
    expect(ipv6Slash64('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(ipv6Slash64('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(ipv6Slash64('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(ipv6Slash64('2001:db8:1:3::1')).not.toBe(ipv6Slash64('2001:db8:1:2::1'));
  });
});
