// Public overlays in the dashboard, in Chromium against the real daemon: the Public switch (the Premium
// prompt while Free), and for a public overlay what /status says of its relay: the state in words, the
// viewer URL with its Copy button and QR code, and the live viewer count.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { qrPath } from '../../daemon/dashboard/src/public-overlay.js';
import type { CreationLimits } from '../../daemon/src/http/control-api.js';
import { writeLicence } from '../../daemon/src/licence/licence-file.js';
import { LicenceManager } from '../../daemon/src/licence/licence-manager.js';
import type { RelayStatus } from '../../shared/protocol/relay.js';
import { launchChromium } from '../support/chromium.js';
import { api, makeDataDir, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { signInDashboard } from '../support/dashboard.js';
import { startFakeRelayHub } from '../support/fakes/relay-hub.js';
import { licenceSigner, trustSigner } from '../support/licence-signer.js';

let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1300, height: 900 } });
  context.setDefaultTimeout(10_000);
});
afterAll(async () => {
  await browser?.close();
});

const card = (page: Page, id: string) => page.locator(`li.overlay-card[data-overlay-id="${id}"]`);
const isPublic = async (daemon: TestDaemon, id: string) =>
  ((await (await api(daemon, 'GET', `/api/overlays/${id}`)).json()) as { public: boolean }).public;

describe('the Public switch while Free', () => {
  it('shows the Premium prompt and leaves the overlay private', async () => {
    const dataDir = await makeDataDir();
    // Signed out: the free tier of the bundled config.
    const licence = new LicenceManager({ dataDir, issuer: 'http://gatekeeper.invalid', log: () => {} });
    const daemon = await startTestDaemon({ dataDir, limits: licence });
    await licence.load();
    const page = await context.newPage();
    try {
      const demo = daemon.overlays.list()[0]!;
      await signInDashboard(page, daemon);
      const overlay = card(page, demo.id);
      const toggle = overlay.getByRole('switch', { name: 'Public' });
      expect(await toggle.isChecked()).toBe(false);
      await toggle.click();
      const prompt = overlay.locator('[data-limit]');
      await prompt.getByText('Free tier limit reached').waitFor();
      expect(await prompt.textContent()).toMatch(/Public overlays/);
      // Not the developer's view: no status code or error code.
      expect(await prompt.textContent()).not.toMatch(/403|premium_required/);
      await expect.poll(() => toggle.isChecked()).toBe(false);
      expect(await isPublic(daemon, demo.id)).toBe(false);
      // Nothing about a relay shows for a private overlay.
      expect(await overlay.locator('[data-relay-state]').count()).toBe(0);
    } finally {
      await page.close();
      await daemon.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a public overlay on Premium', () => {
  /** Premium as far as the control API is concerned: publishing is allowed. */
  const premium: CreationLimits = {
    canCreateOverlay: () => ({ ok: true }),
    canSaveRules: () => ({ ok: true }),
    canPublish: () => ({ ok: true }),
  };

  // Three looks at /status, 5 s apart at most: more than the browser project's 30 s on a loaded machine.
  it('turns public with the switch, then shows the relay state, viewer URL, its QR code and the viewer count', {
    timeout: 60_000,
  }, async () => {
    const daemon = await startTestDaemon({ limits: premium });
    const page = await context.newPage();
    try {
      const demo = daemon.overlays.list()[0]!;
      const viewerUrl = `https://gate.example/v/o-abc123/${demo.id}`;
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: daemon.url });
      await signInDashboard(page, daemon);
      // The daemon reports its publisher under `relay` in /status (here set directly): connecting first.
      let entry: RelayStatus = { overlayId: demo.id, state: 'connecting', viewers: 0 };
      daemon.statusFields.set('relay', () => [entry]);
      const overlay = card(page, demo.id);
      const toggle = overlay.getByRole('switch', { name: 'Public' });
      await toggle.click();
      await expect.poll(() => isPublic(daemon, demo.id)).toBe(true);
      await expect.poll(() => toggle.isChecked()).toBe(true);
      expect(await overlay.locator('[data-limit]').count()).toBe(0);
      // Asked for at once after the switch: no wait for the next look at /status.
      const state = overlay.locator('[data-relay-state]');
      await expect.poll(() => state.getAttribute('data-relay-state')).toBe('connecting');
      expect(await state.textContent()).toContain('Connecting to the relay');
      expect(await overlay.locator('[data-qr]').count()).toBe(0);

      // Connected: the view looks again every 5 s and shows the URL and who watches.
      entry = { overlayId: demo.id, state: 'connected', viewers: 1234, viewerUrl };
      await expect.poll(() => state.textContent(), { timeout: 15_000 }).toContain('1,234 viewers');
      expect(await state.textContent()).toContain('Live: viewers can watch');
      expect(await overlay.getByRole('textbox', { name: 'Viewer URL', exact: true }).inputValue()).toBe(
        viewerUrl,
      );

      // The QR code is the viewer URL's.
      const qr = overlay.getByRole('img', { name: /QR code of the viewer URL/ });
      expect(await qr.locator('path').getAttribute('d')).toBe(qrPath(viewerUrl).d);
      const box = await qr.boundingBox();
      expect(box?.width).toBeGreaterThanOrEqual(120);

      await overlay.getByRole('button', { name: 'Copy viewer URL' }).click();
      await overlay.getByRole('button', { name: 'Copied ✓' }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(viewerUrl);

      // Live: the count follows, and a lost publisher says so with the daemon's reason.
      entry = { ...entry, state: 'backoff', viewers: 1, detail: 'next try in 8 s' };
      await expect
        .poll(() => state.textContent(), { timeout: 15_000 })
        .toContain('Connection lost, trying again soon: next try in 8 s');
      expect(await state.textContent()).toContain('1 viewer');
      expect(await state.textContent()).not.toContain('1,234');

      // Off again: the overlay is private and the relay details go.
      await toggle.click();
      await expect.poll(() => isPublic(daemon, demo.id)).toBe(false);
      await expect.poll(() => overlay.locator('[data-relay-state]').count()).toBe(0);
      expect(await overlay.locator('[data-qr]').count()).toBe(0);
    } finally {
      await page.close();
      await daemon.stop();
    }
  });
  it('warns before deleting a public overlay how many watch it through the relay, besides local pages', async () => {
    const daemon = await startTestDaemon({ limits: premium });
    const page = await context.newPage();
    try {
      const demo = daemon.overlays.list()[0]!;
      daemon.statusFields.set('relay', () => [
        {
          overlayId: demo.id,
          state: 'connected',
          viewers: 1234,
          viewerUrl: `https://gate.example/v/o-a/${demo.id}`,
        },
      ]);
      await signInDashboard(page, daemon);
      const overlay = card(page, demo.id);
      await overlay.getByRole('switch', { name: 'Public' }).click();
      await expect.poll(() => isPublic(daemon, demo.id)).toBe(true);
      await overlay.getByRole('button', { name: 'Delete' }).click();
      const question = overlay.locator('fieldset.confirm legend');
      await expect
        .poll(() => question.textContent())
        .toBe(
          `Delete “${demo.name}” for good? 1,234 viewers watch it through its public link: it will show nothing there from then on.`,
        );
    } finally {
      await page.close();
      await daemon.stop();
    }
  });
});

/** A Premium daemon publishing to a stand-in relay, its data directory and its licence; `stop` ends all three. */
async function premiumWithRelay() {
  const issuer = 'http://gatekeeper.invalid';
  const signer = licenceSigner();
  const hub = await startFakeRelayHub();
  const dataDir = await makeDataDir();
  await trustSigner(dataDir, signer);
  await writeFile(join(dataDir, 'rules.json'), '[]\n');
  await writeLicence(join(dataDir, 'license.json'), {
    token: signer.sign({ sub: 'member-1', tier: 'premium', iss: issuer }),
    tier: 'premium',
    validated_at: new Date().toISOString(),
    user_id: 'member-1',
    verdict: 'ok',
  });
  const licence = new LicenceManager({ dataDir, issuer, log: () => {} });
  await licence.load();
  const daemon = await startTestDaemon({
    dataDir,
    limits: licence,
    relay: { licence, gatekeeperUrl: hub.url },
  });
  return {
    hub,
    daemon,
    stop: async () => {
      await daemon.stop();
      await hub.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

describe('a public overlay another daemon took over', () => {
  it('says from where, and "Publish from here again" takes it back', { timeout: 60_000 }, async () => {
    const { hub, daemon, stop } = await premiumWithRelay();
    const page = await context.newPage();
    try {
      const demo = daemon.overlays.list()[0]!;
      const { id: _id, ...rest } = demo;
      expect((await api(daemon, 'PUT', `/api/overlays/${demo.id}`, { ...rest, public: true })).status).toBe(
        200,
      );
      await hub.published(demo.id, 15_000);
      await signInDashboard(page, daemon);
      const overlay = card(page, demo.id);
      const state = overlay.locator('[data-relay-state]');
      await expect.poll(() => state.getAttribute('data-relay-state'), { timeout: 15_000 }).toBe('connected');
      expect(await overlay.getByRole('button', { name: 'Publish from here again' }).count()).toBe(0);

      await hub.closeWith(demo.id, 4409, 'another daemon publishes this overlay (from 198.51.100.7)');
      await expect
        .poll(() => state.textContent(), { timeout: 15_000 })
        .toContain('another daemon publishes this overlay from 198.51.100.7 since');
      await overlay.getByRole('button', { name: 'Publish from here again' }).click();
      await expect.poll(() => hub.open(demo.id).length, { timeout: 15_000 }).toBe(1);
      await expect.poll(() => state.getAttribute('data-relay-state'), { timeout: 15_000 }).toBe('connected');
      expect(await overlay.getByRole('button', { name: 'Publish from here again' }).count()).toBe(0);
    } finally {
      await page.close();
      await stop();
    }
  });
});

describe('a public overlay published to a stand-in relay', () => {
  it("publishes on the switch, then shows Live, the relay's viewer URL and QR code, and the count it sends", {
    timeout: 60_000,
  }, async () => {
    const issuer = 'http://gatekeeper.invalid';
    const signer = licenceSigner();
    const hub = await startFakeRelayHub();
    const dataDir = await makeDataDir();
    await trustSigner(dataDir, signer);
    await writeFile(join(dataDir, 'rules.json'), '[]\n');
    await writeLicence(join(dataDir, 'license.json'), {
      token: signer.sign({ sub: 'member-1', tier: 'premium', iss: issuer }),
      tier: 'premium',
      validated_at: new Date().toISOString(),
      user_id: 'member-1',
      verdict: 'ok',
    });
    const licence = new LicenceManager({ dataDir, issuer, log: () => {} });
    await licence.load();
    const daemon = await startTestDaemon({
      dataDir,
      limits: licence,
      relay: { licence, gatekeeperUrl: hub.url },
    });
    const page = await context.newPage();
    try {
      const demo = daemon.overlays.list()[0]!;
      hub.viewers.set(demo.id, 3);
      await signInDashboard(page, daemon);
      const overlay = card(page, demo.id);
      await overlay.getByRole('switch', { name: 'Public' }).click();
      // One publisher socket, with a snapshot: the daemon publishes the overlay.
      await hub.published(demo.id, 15_000);
      const state = overlay.locator('[data-relay-state]');
      await expect.poll(() => state.getAttribute('data-relay-state'), { timeout: 15_000 }).toBe('connected');
      await expect.poll(() => state.textContent(), { timeout: 15_000 }).toContain('3 viewers');
      const viewerUrl = `${hub.url}/v/o-fake/${demo.id}`;
      expect(await overlay.getByRole('textbox', { name: 'Viewer URL', exact: true }).inputValue()).toBe(
        viewerUrl,
      );
      const qr = overlay.getByRole('img', { name: /QR code of the viewer URL/ });
      expect(await qr.locator('path').getAttribute('d')).toBe(qrPath(viewerUrl).d);

      // The relay counts more viewers: the card follows within a look or two.
      hub.sendViewers(demo.id, 1500);
      await expect.poll(() => state.textContent(), { timeout: 15_000 }).toContain('1,500 viewers');
      expect(hub.open(demo.id)).toHaveLength(1);
    } finally {
      await page.close();
      await daemon.stop();
      await hub.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
