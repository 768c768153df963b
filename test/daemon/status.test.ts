import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeDaemonStatus } from '../../daemon/src/cli/status-text.js';
import { OBS_UNUSED } from '../../daemon/src/http/status-parts.js';
import type { DaemonStatus } from '../../shared/protocol/index.js';
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
    expect(await res.json()).toEqual({
      running: true,
      port: daemon.port,
      obs: { state: 'off', detail: OBS_UNUSED },
    });
  });

  it('says OBS is not used by any rule, in /status and in `overlay-daemon status`, not just "off"', async () => {
    const body = (await (await fetch(`${daemon.url}/status`)).json()) as DaemonStatus;
    expect(body.obs?.detail).toMatch(/^not used by any rule/);
    const text = describeDaemonStatus(body, daemon.url);
    expect(text).toContain(
      '  OBS:           not used by any rule: OBS is connected once a rule has an OBS action',
    );
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
