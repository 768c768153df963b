// Devices in the dashboard, in Chromium against the real daemon: "Pair a phone" shows the code, the
// tunnel URL and its QR code; a phone sending the code through the tunnel shows as a prompt; Approve
// lists the device; Revoke (asked once more) removes it. The changes devices made are listed newest first.
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { qrPath } from '../../daemon/dashboard/src/public-overlay.js';
import { AuditLog } from '../../daemon/src/devices/audit.js';
import { launchChromium } from '../support/chromium.js';
import { api, rawRequest, startTestDaemon } from '../support/daemon.js';
import { openTab, signInDashboard } from '../support/dashboard.js';

const TUNNEL = 'o-abc.tunnel.example';
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  context.setDefaultTimeout(10_000);
});
afterAll(async () => {
  await browser?.close();
});

describe('pairing a phone from the dashboard', () => {
  it('shows the code and QR code, prompts for the phone, lists it once approved and removes it on Revoke', async () => {
    const daemon = await startTestDaemon();
    daemon.tunnelHost = TUNNEL;
    const page = await context.newPage();
    try {
      await signInDashboard(page, daemon);
      await openTab(page, 'Settings');
      const panel = page.locator('[data-devices]');
      await panel.locator('[data-no-devices]').waitFor();
      await panel.getByLabel('Role').selectOption('owner');
      await panel.getByRole('button', { name: 'Pair a phone' }).click();

      const code = (await panel.locator('[data-pairing-code]').textContent()) ?? '';
      expect(code).toMatch(/^[A-Z2-7]{10}$/);
      const url = `https://${TUNNEL}/pair#${code}`;
      expect(await panel.locator('[data-pairing-url]').textContent()).toBe(url);
      expect(await panel.locator('[data-pairing-qr] path').getAttribute('d')).toBe(qrPath(url).d);
      expect(await panel.locator('[data-time-left]').textContent()).toMatch(/^(10:00|9:[0-5]\d)$/);
      // Usable on a phone: nothing wider than the screen.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

      // The phone sends the code through the tunnel.
      const sentCode = await rawRequest(daemon.port, {
        method: 'POST',
        path: '/pair',
        headers: { Host: TUNNEL, 'CF-Connecting-IP': '203.0.113.9', 'Content-Type': 'application/json' },
        body: JSON.stringify({ code: code.toLowerCase(), deviceName: 'Sam’s phone' }),
      });
      expect(sentCode.status).toBe(202);
      const prompt = panel.locator('[data-pairing-request]');
      await prompt.waitFor();
      expect(await prompt.textContent()).toContain('Sam’s phone (203.0.113.9) asks to pair as owner');

      await prompt.getByRole('button', { name: 'Approve' }).click();
      const listed = panel.locator('.device-list li');
      await listed.waitFor();
      expect(await listed.textContent()).toContain('Sam’s phone · owner');
      expect(await prompt.count()).toBe(0);
      const devices = (await (await api(daemon, 'GET', '/api/devices')).json()) as { name: string }[];
      expect(devices.map((d) => d.name)).toEqual(['Sam’s phone']);

      await listed.getByRole('button', { name: 'Revoke' }).click();
      await listed.getByRole('button', { name: 'Yes, revoke' }).click();
      await panel.locator('[data-no-devices]').waitFor();
      expect(await (await api(daemon, 'GET', '/api/devices')).json()).toEqual([]);
    } finally {
      await page.close();
      await daemon.stop();
    }
  });

  it('follows the devices while shown: "Last seen" moves when the phone is used, without reopening', async () => {
    const daemon = await startTestDaemon();
    daemon.tunnelHost = TUNNEL;
    const page = await context.newPage();
    try {
      const phone = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
        rawRequest(daemon.port, {
          method,
          path,
          headers: {
            Host: TUNNEL,
            'CF-Connecting-IP': '203.0.113.9',
            'Content-Type': 'application/json',
            ...headers,
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      const { code } = (await (await api(daemon, 'POST', '/api/pairings/offer', {})).json()) as {
        code: string;
      };
      const { pairingId } = (
        await phone('POST', '/pair', {}, { code, deviceName: 'Sam’s phone' })
      ).json() as {
        pairingId: string;
      };
      expect((await api(daemon, 'POST', `/api/pairings/${pairingId}/approve`, {})).status).toBe(204);
      const setCookie = (await phone('GET', `/pair/${pairingId}`)).headers['set-cookie'];
      const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] ?? '';

      await signInDashboard(page, daemon);
      await openTab(page, 'Settings');
      const listed = page.locator('[data-devices] .device-list li');
      await listed.getByText('Last seen never').waitFor();
      // The phone opens its dashboard: the panel, left open, says so.
      expect((await phone('GET', '/api/session', { Cookie: cookie })).status).toBe(200);
      await listed.getByText(/^Last seen .+ from 203\.0\.113\.9$/).waitFor();
      expect(await listed.textContent()).not.toContain('never');
    } finally {
      await page.close();
      await daemon.stop();
    }
  });

  it('says that pairing needs the tunnel when none runs', async () => {
    const daemon = await startTestDaemon();
    const page = await context.newPage();
    try {
      await signInDashboard(page, daemon);
      await openTab(page, 'Settings');
      const panel = page.locator('[data-devices]');
      await panel.getByRole('button', { name: 'Pair a phone' }).click();
      await panel.getByText(/No code: .*tunnel/).waitFor();
      expect(await panel.locator('[data-pairing-code]').count()).toBe(0);
    } finally {
      await page.close();
      await daemon.stop();
    }
  });
});

describe('the changes devices made', () => {
  it('are listed newest first on a phone-wide screen, older ones with Load more, new ones with Refresh', async () => {
    const daemon = await startTestDaemon();
    // What the device sessions record, written to the daemon's own events.db.
    const audit = new AuditLog(daemon.journal.database, { log: () => {} });
    for (let n = 1; n <= 60; n++)
      audit.record({
        deviceId: 'd1',
        deviceName: 'Sam’s phone',
        method: 'POST',
        path: n === 60 ? `/api/actions/queues/${'q'.repeat(90)}/skip` : `/api/events?test=true&n=${n}`,
        status: n === 60 ? 200 : 202,
      });
    const page = await context.newPage();
    try {
      await signInDashboard(page, daemon);
      await openTab(page, 'Settings');
      const list = page.locator('[data-device-audit]');
      const rows = list.locator('li');
      await rows.first().waitFor();
      expect(await rows.count()).toBe(50);
      const newest = (await rows.first().textContent()) ?? '';
      expect(newest).toContain('Sam’s phone');
      expect(newest).toContain(`POST /api/actions/queues/${'q'.repeat(90)}/skip`);
      expect(newest).toContain('200');
      expect(await rows.nth(1).textContent()).toContain('POST /api/events?test=true&n=59');
      // A long path wraps: nothing wider than the screen.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      expect(await list.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);

      await list.getByRole('button', { name: 'Load more' }).click();
      await rows.nth(59).waitFor();
      expect(await rows.last().textContent()).toContain('/api/events?test=true&n=1');
      expect(await list.getByRole('button', { name: 'Load more' }).count()).toBe(0);

      audit.record({
        deviceId: 'd1',
        deviceName: 'Mod laptop',
        method: 'DELETE',
        path: '/api/media/a.png',
        status: 204,
      });
      await list.getByRole('button', { name: 'Refresh' }).click();
      await list.getByText('DELETE /api/media/a.png').waitFor();
      expect(await rows.first().textContent()).toContain('Mod laptop');
    } finally {
      await page.close();
      await daemon.stop();
    }
  });
});
