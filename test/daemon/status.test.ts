import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
beforeAll(async () => {
  daemon = await startTestDaemon();
});
afterAll(() => daemon?.stop());

describe('GET /status', () => {
  it('reports running and the port actually bound when started on port 0', async () => {
    expect(daemon.port).toBeGreaterThan(0);
    const res = await fetch(`${daemon.url}/status`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.json()).toEqual({ running: true, port: daemon.port, obs: { state: 'off' } });
  });

  it('creates a demo overlay on first start and serves its page', async () => {
    const [demo] = daemon.registry.list();
    expect(demo?.name).toBe('Demo overlay');
    const res = await fetch(`${daemon.url}/overlay/${demo!.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain(`window.__APP_OVERLAY_ID__="${demo!.id}"`);
  });
});
