// --dev: the page comes from daemon/page through Vite in middleware mode, with HMR on the daemon's own port.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, startTestDaemon, subscribe, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;

beforeAll(async () => {
  daemon = await startTestDaemon({ dev: true });
}, 30_000);
afterAll(() => daemon?.stop());

describe('--dev', () => {
  it('serves the source page through Vite with the globals injected, and its modules transformed', async () => {
    const id = daemon.overlays.list()[0]!.id;
    const res = await fetch(`${daemon.url}/overlay/${id}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(`window.__APP_OVERLAY_ID__="${id}"`);
    expect(html).toContain('/overlay-dev/@vite/client');
    const entry = /src="(\/overlay-dev\/src\/main\.ts)"/.exec(html)?.[1];
    expect(entry).toBeDefined();
    const module = await fetch(`${daemon.url}${entry}`);
    expect(module.status).toBe(200);
    expect(module.headers.get('content-type')).toMatch(/javascript/);
    expect(module.headers.get('x-content-type-options')).toBe('nosniff');
    // The overlay WebSocket still works beside Vite's HMR socket.
    const client = await subscribe(daemon, id);
    client.close();
  }, 30_000);

  it('serves the dashboard from its sources through Vite, with hot reload, to local clients only', async () => {
    const res = await fetch(`${daemon.url}/dashboard/`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('/dashboard/@vite/client');
    const entry = /src="(\/dashboard\/src\/[^"]+)"/.exec(html)?.[1];
    expect(entry).toBeDefined();
    const module = await fetch(`${daemon.url}${entry}`);
    expect(module.status).toBe(200);
    expect(module.headers.get('content-type')).toMatch(/javascript/);
    daemon.tunnelHost = 'o-dev.tunnel.example';
    try {
      const viaTunnel = await rawRequest(daemon.port, {
        path: '/dashboard/',
        headers: { Host: 'o-dev.tunnel.example' },
      });
      expect(viaTunnel.status).toBe(404);
    } finally {
      daemon.tunnelHost = undefined;
    }
  }, 30_000);
});
