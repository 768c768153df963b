// The phone's pairing page in Chromium at 390×844 against the real daemon: the code comes from the
// address's fragment, the page waits for the streamer and says when they approve; a wrong code gets words.
// (A browser cannot send the tunnel's Host, so the page is opened locally; the daemon serves it the same.)
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { api, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { routeTunnel } from '../support/tunnel-browser.js';
import { viaTunnel } from '../support/tunnel-phone.js';

const TUNNEL = 'o-abc.tunnel.example';
let browser: Browser;
let context: BrowserContext;
let daemon: TestDaemon;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  context.setDefaultTimeout(10_000);
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  daemon = await startTestDaemon();
  daemon.tunnelHost = TUNNEL;
  page = await context.newPage();
});
afterEach(async () => {
  await page.close();
  await daemon.stop();
});

async function offer(): Promise<string> {
  const res = await api(daemon, 'POST', '/api/pairings/offer', {});
  expect(res.status).toBe(201);
  return ((await res.json()) as { code: string }).code;
}

describe('the phone pairing page', () => {
  it('takes the code from the address, waits for the streamer, then says approved with a link to the dashboard', async () => {
    const code = await offer();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${daemon.url}/pair#${code.toLowerCase()}`);

    const codeInput = page.getByLabel('Pairing code');
    expect(await codeInput.inputValue()).toBe(code);
    // The code leaves the address bar (and so the history) once read.
    expect(new URL(page.url()).hash).toBe('');
    const name = page.getByLabel('Name of this device');
    expect(await name.inputValue()).not.toBe('');
    await name.fill('Sam’s phone');

    // Usable on a phone: nothing wider than the screen, targets at least 44 px tall.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const send = page.getByRole('button', { name: 'Pair' });
    for (const target of [codeInput, name, send]) {
      expect((await target.boundingBox())?.height ?? 0).toBeGreaterThanOrEqual(44);
    }

    await send.click();
    const status = page.getByRole('status');
    await page.getByText('Waiting for the streamer to approve on their computer…').waitFor();

    const waiting = (await (await api(daemon, 'GET', '/api/pairings')).json()) as {
      pairingId: string;
      deviceName: string;
    }[];
    expect(waiting.map((p) => p.deviceName)).toEqual(['Sam’s phone']);
    const pairingId = waiting[0]?.pairingId ?? '';
    expect((await api(daemon, 'POST', `/api/pairings/${pairingId}/approve`, {})).status).toBe(204);

    await page.getByText('Approved — opening the dashboard').waitFor();
    const open = page.getByRole('link', { name: 'Open the dashboard' });
    expect(await open.getAttribute('href')).toBe('/dashboard');
    expect((await open.boundingBox())?.height ?? 0).toBeGreaterThanOrEqual(44);
    expect(await status.textContent()).toBe('Approved — opening the dashboard');
    await waitFor(
      async () => ((await (await api(daemon, 'GET', '/api/devices')).json()) as unknown[]).length === 1,
    );
    // The inline script and style ran under the page's strict policy: no violation reported.
    expect(errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
  });

  it('says the code is wrong, used or expired when the daemon refuses it (403)', async () => {
    await offer();
    await page.goto(`${daemon.url}/pair#AAAAAAAAAA`);
    await page.getByRole('button', { name: 'Pair' }).click();
    await page.getByText('This code is wrong, already used or expired').waitFor();
    // The form is usable again, to fix the code.
    expect(await page.getByRole('button', { name: 'Pair' }).isEnabled()).toBe(true);
  });

  it('says to wait after too many wrong codes (429)', async () => {
    await offer();
    await page.goto(`${daemon.url}/pair#AAAAAAAAAA`);
    const send = page.getByRole('button', { name: 'Pair' });
    // Five wrong codes a minute from one address are refused one by one; the sixth try is held off.
    for (let i = 0; i < 5; i++) {
      await send.click();
      await page.getByText('This code is wrong, already used or expired').waitFor();
      await page.getByRole('status').evaluate((el) => {
        el.textContent = '';
      });
    }
    await send.click();
    await page.getByText(/^Too many tries: wait \d+ seconds before trying again\.$/).waitFor();
  });

  it('says when the streamer refuses', async () => {
    const code = await offer();
    await page.goto(`${daemon.url}/pair#${code}`);
    await page.getByRole('button', { name: 'Pair' }).click();
    await page.getByText('Waiting for the streamer to approve on their computer…').waitFor();
    const [waiting] = (await (await api(daemon, 'GET', '/api/pairings')).json()) as { pairingId: string }[];
    expect((await api(daemon, 'POST', `/api/pairings/${waiting?.pairingId}/refuse`, {})).status).toBe(204);
    await page.getByText('Refused').waitFor();
  });
});

describe('the phone through the tunnel', () => {
  let phone: BrowserContext;
  let tab: Page;
  let origin: string;
  beforeEach(async () => {
    phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
    phone.setDefaultTimeout(10_000);
    origin = await routeTunnel(phone, daemon.port, TUNNEL);
    tab = await phone.newPage();
  });
  afterEach(async () => {
    await phone.close();
  });

  const devices = async () =>
    (await (await api(daemon, 'GET', '/api/devices')).json()) as { id: string; name: string }[];

  /** The phone opens the QR code's address, sends the code as `name`, and the streamer approves. */
  async function pairAs(name: string): Promise<void> {
    await tab.goto(`${origin}/pair#${await offer()}`);
    await tab.getByLabel('Name of this device').fill(name);
    await tab.getByRole('button', { name: 'Pair' }).click();
    await tab.getByText('Waiting for the streamer to approve on their computer…').waitFor();
    const said = tab.getByText('Approved — opening the dashboard').waitFor();
    const [waiting] = (await (await api(daemon, 'GET', '/api/pairings')).json()) as { pairingId: string }[];
    expect((await api(daemon, 'POST', `/api/pairings/${waiting?.pairingId}/approve`, {})).status).toBe(204);
    await said;
    // It opens the dashboard by itself, signed in as the device it now is.
    await tab.waitForURL(`${origin}/dashboard`);
    await tab.getByRole('navigation', { name: 'Sections' }).waitFor();
  }

  const cookie = async () =>
    (await phone.cookies(origin)).find((c) => c.name === '__Host-overlay_device')?.value ?? '';
  const session = (value: string) =>
    viaTunnel(daemon, 'GET', '/api/session', { headers: { Cookie: `__Host-overlay_device=${value}` } });

  it('opens the dashboard once approved; a reload after revocation shows the signed-out page', async () => {
    await pairAs('Sam’s phone');
    const [device] = await devices();
    expect(device?.name).toBe('Sam’s phone');
    expect((await api(daemon, 'DELETE', `/api/devices/${device?.id}`)).status).toBe(204);
    await tab.reload();
    await tab.getByRole('heading', { name: 'Signed out', level: 1 }).waitFor();
    expect(await tab.getByRole('link', { name: 'pair again' }).getAttribute('href')).toBe('/pair');
    expect(await tab.locator('body').textContent()).not.toContain('"error"');
  });

  it('pairing the same phone again replaces its old device', async () => {
    await pairAs('Phone');
    const first = await cookie();
    expect((await session(first)).status).toBe(200);
    await pairAs('Phone, paired again');
    expect((await devices()).map((d) => d.name)).toEqual(['Phone, paired again']);
    expect((await session(first)).status).toBe(401);
    expect((await session(await cookie())).status).toBe(200);
  });
});
