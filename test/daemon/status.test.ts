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

  it('`overlay-daemon status` says every time in local time, "23:15" today and with the date otherwise', () => {
    const now = new Date(2031, 11, 2, 20, 0); // local time
    const status: DaemonStatus = {
      running: true,
      port: 1,
      licence: {
        tier: 'premium',
        state: 'valid',
        valid_until: new Date(2031, 11, 9, 23, 15).toISOString(),
        last_validated_at: new Date(2031, 11, 2, 19, 0).toISOString(),
      },
      tiktok: {
        source: 'tiktok',
        username: 'some.streamer',
        state: 'connected',
        attempts: 0,
        connectedSince: new Date(2031, 11, 2, 19, 5, 30).toISOString(),
      },
    };
    const text = describeDaemonStatus(status, 'http://127.0.0.1:1', now);
    expect(text).toContain('  licence:       premium tier, valid, until 2031-12-09 23:15\n');
    expect(text).toContain('  TikTok LIVE:   @some.streamer connected since 19:05\n');
    expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T|Z\b|UTC/);
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
