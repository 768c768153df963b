// The phone's pairing page (GET /pair): served to this computer and through the tunnel, never cached,
// never framed, with a policy that allows only its own inline style and script (by hash) and calls home.
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rawRequest, startTestDaemon, type TestDaemon } from '../support/daemon.js';

const TUNNEL = 'o-abc.tunnel.example';
let daemon: TestDaemon;

beforeEach(async () => {
  daemon = await startTestDaemon();
  daemon.tunnelHost = TUNNEL;
});
afterEach(async () => {
  await daemon.stop();
});

const hashOf = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

function expectPairPage(res: Awaited<ReturnType<typeof rawRequest>>): void {
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.body).toContain('<title>Pair this device</title>');
  expect(res.body).toContain('Pairing code');
}

describe('GET /pair', () => {
  it('is served through the tunnel, with no admin key and no cookie', async () => {
    const res = await rawRequest(daemon.port, {
      path: '/pair',
      headers: { Host: TUNNEL, 'CF-Connecting-IP': '203.0.113.9' },
    });
    expectPairPage(res);
  });

  it('is served on this computer too', async () => {
    expectPairPage(
      await rawRequest(daemon.port, { path: '/pair', headers: { Host: `127.0.0.1:${daemon.port}` } }),
    );
  });

  it('allows only its own inline style and script, by hash, and calls to its own origin', async () => {
    const res = await rawRequest(daemon.port, { path: '/pair', headers: { Host: TUNNEL } });
    const csp = String(res.headers['content-security-policy']);
    const directives = Object.fromEntries(
      csp.split('; ').map((d) => {
        const [name, ...values] = d.split(' ');
        return [name, values.join(' ')];
      }),
    );
    const style = /<style>([\s\S]*?)<\/style>/.exec(res.body)?.[1] ?? '';
    const script = /<script>([\s\S]*?)<\/script>/.exec(res.body)?.[1] ?? '';
    expect(style).not.toBe('');
    expect(script).not.toBe('');
    expect(directives).toEqual({
      'default-src': "'none'",
      'script-src': hashOf(script),
      'style-src': hashOf(style),
      'connect-src': "'self'",
      'base-uri': "'none'",
      'form-action': "'none'",
      'frame-ancestors': "'none'",
    });
    expect(csp).not.toContain('unsafe-inline');
    // Nothing is loaded from anywhere: no external script, style, image or font.
    expect(res.body).not.toMatch(/\bsrc=|<link\b|https?:\/\//);
    // Exactly one script and one style, so the hashes cover everything the page runs.
    expect(res.body.match(/<script/g)).toHaveLength(1);
    expect(res.body.match(/<style/g)).toHaveLength(1);
  });

  it('keeps answering the pairing routes beside it (POST /pair, GET /pair/:id)', async () => {
    const wrong = await rawRequest(daemon.port, {
      method: 'POST',
      path: '/pair',
      headers: { Host: TUNNEL, 'CF-Connecting-IP': '203.0.113.9', 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: 'AAAAAAAAAA', deviceName: 'Phone' }),
    });
    expect(wrong.status).toBe(403);
    const unknown = await rawRequest(daemon.port, { path: '/pair/nope', headers: { Host: TUNNEL } });
    expect(unknown.status).toBe(404);
  });
});
