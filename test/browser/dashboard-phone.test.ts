// The dashboard on a phone (390×844 in Chromium): every view without sideways scrolling, a compact top bar
// that never covers the control the keyboard is on, touch targets of at least 44 px, and the views a
// phone is for (Status, Actions, Test events, History) first in the navigation.
// With PHONE_SCREENSHOTS=1 it also writes docs/images/phone-<view>.png, the pictures in docs/dashboard.md.
import { readFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { signInDashboard } from '../support/dashboard.js';

const PHONE = { width: 390, height: 844 };
const TOUCH = 44;

let daemon: TestDaemon;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let adminKey: string;
let overlayId: string;

/** A webhook receiver that never answers: each call holds its queue until the call's timeout. */
const held: ServerResponse[] = [];
const receiver = createServer((req, res) => {
  req.resume();
  held.push(res);
});
const receiverUrl = () => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

async function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${daemon.url}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json', ...init.headers },
  });
}

/** Every view by its address and its level-one heading. */
const VIEWS = [
  { name: 'status', hash: '#/status', heading: 'Status' },
  { name: 'actions', hash: '#/actions', heading: 'Actions' },
  { name: 'test', hash: '#/test', heading: 'Test events' },
  { name: 'history', hash: '#/history', heading: 'History' },
  { name: 'overlays', hash: '#/overlays', heading: 'Overlays' },
  { name: 'editor', hash: '', heading: 'Phone widgets' },
  { name: 'rules', hash: '#/rules', heading: 'Rules' },
  { name: 'media', hash: '#/media', heading: 'Media' },
  { name: 'sources', hash: '#/sources', heading: 'Sources' },
  { name: 'settings', hash: '#/settings', heading: 'Settings' },
] as const;

async function show(view: (typeof VIEWS)[number]): Promise<void> {
  const hash = view.name === 'editor' ? `#/overlays/${encodeURIComponent(overlayId)}` : view.hash;
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
  await page.getByRole('heading', { name: view.heading, level: 1 }).waitFor();
  // Views that load their data show it within a moment; let the layout settle on it.
  await page.waitForLoadState('networkidle');
  await page.evaluate(() => window.scrollTo(0, 0));
}

/**
 * Visible controls smaller than a finger, by their text. Not counted: controls inside the overlay
 * editor's canvas (widgets and their resize handles are drawn at the overlay's scale, moved by drag or
 * the arrow keys, and each has a form field beside the canvas), links in running text, and hidden
 * inputs behind a styled label (the label is the target).
 */
const smallTargets = () =>
  page.evaluate((min) => {
    const small: string[] = [];
    const controls = document.querySelectorAll<HTMLElement>(
      'button, input:not([type="hidden"]), select, textarea, [role="tab"], [role="switch"], summary',
    );
    for (const el of Array.from(controls)) {
      if (el.closest('.canvas')) continue;
      const box = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      if (box.width === 0 || box.height === 0 || style.visibility === 'hidden') continue;
      if (el.closest('.visually-hidden')) continue;
      // A checkbox or radio counts with its label around it: the label is what a finger hits.
      const target =
        el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio')
          ? (el.closest('label')?.getBoundingClientRect() ?? box)
          : box;
      if (target.height < min - 0.5) {
        small.push(
          `${el.tagName.toLowerCase()} "${(el.textContent || el.getAttribute('aria-label') || (el as HTMLInputElement).name || '').trim().slice(0, 40)}" ${Math.round(target.height)}px`,
        );
      }
    }
    return small;
  }, TOUCH);

beforeAll(async () => {
  [daemon, browser] = await Promise.all([
    startTestDaemon(),
    launchChromium(),
    new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve)),
  ]);
  adminKey = (await readFile(join(daemon.dataDir.root, 'admin.key'), 'utf8')).trim();
  const res = await api('/api/overlays', {
    method: 'POST',
    body: JSON.stringify({
      name: 'Phone widgets',
      width: 1920,
      height: 1080,
      widgets: [
        { id: 'hello', type: 'text', x: 40, y: 40, content: 'Welcome to the stream' },
        { id: 'goal', type: 'goal', x: 40, y: 300, title: 'Likes', source: 'likes', target: 100, current: 5 },
      ],
    }),
  });
  overlayId = ((await res.json()) as { id: string }).id;
  // A stream in History: its totals, chart and top gifters are the widest parts of that view.
  const viewer = (name: string) => ({ uniqueId: name.toLowerCase(), nickname: name });
  await api('/api/events', {
    method: 'POST',
    body: JSON.stringify({
      type: 'gift',
      user: viewer('Rosa'),
      data: { giftName: 'Rose', repeatCount: 20, diamondCount: 1 },
    }),
  });
  await api('/api/events', {
    method: 'POST',
    body: JSON.stringify({
      type: 'gift',
      user: viewer('AVeryLongViewerNameWithoutSpaces'),
      data: { giftName: 'Universe', repeatCount: 1, diamondCount: 124_980 },
    }),
  });
  for (const comment of ['hi', 'wow', 'gg'])
    await api('/api/events', {
      method: 'POST',
      body: JSON.stringify({ type: 'chat', user: viewer('Fan'), data: { comment } }),
    });
  // A rule whose actions go to a named queue, for the Actions view's queues (and a rule in Rules).
  const rules = [
    {
      id: 'camera',
      name: 'Camera on new followers',
      trigger: 'follow',
      actions: [{ kind: 'webhook', url: `${receiverUrl()}/camera`, queue: 'camera-moves' }],
    },
  ];
  await api('/api/rules', { method: 'PUT', body: JSON.stringify(rules) });
  context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 1, hasTouch: true });
  context.setDefaultTimeout(10_000);
  page = await context.newPage();
  await signInDashboard(page, daemon);
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await daemon?.stop();
  for (const res of held.splice(0)) res.end();
  receiver.closeAllConnections();
  receiver.close();
});

describe('the dashboard at 390×844', () => {
  it('puts Status, Actions, Test events and History first in the navigation', async () => {
    const tabs = await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('button')
      .allTextContents();
    expect(tabs.slice(0, 4)).toEqual(['Status', 'Actions', 'Test events', 'History']);
    expect(tabs).toHaveLength(9);
  });

  it('shows the overlay URL once when the dashboard is opened at the tunnel’s address', async () => {
    // The page's own address is the tunnel's, as on a paired phone.
    daemon.statusFields.set('tunnel', () => ({ public_url: daemon.url, connector: 'running' }));
    try {
      await page.reload();
      await page.getByRole('heading', { name: 'Overlays', level: 1 }).waitFor();
      const card = page.locator(`li.overlay-card[data-overlay-id="${overlayId}"]`);
      const url = card.getByLabel(/^OBS Browser Source URL/);
      await expect
        .poll(() => url.evaluate((el) => el.closest('label')?.textContent ?? ''))
        .toContain('tunnel');
      const values = await card
        .locator('input[readonly]')
        .evaluateAll((els) => els.map((el) => (el as HTMLInputElement).value));
      expect(values.filter((v) => v === `${daemon.url}/overlay/${overlayId}`)).toHaveLength(1);
      expect(await card.getByLabel(/^Tunnel URL/).count()).toBe(0);
    } finally {
      daemon.statusFields.delete('tunnel');
    }
  });

  it('keeps the top bar compact, its tabs in one row that scrolls sideways inside the bar', async () => {
    const bar = await page.locator('.topbar').boundingBox();
    expect(bar?.height).toBeLessThanOrEqual(120);
    const nav = await page.getByRole('navigation', { name: 'Sections' }).evaluate((el) => ({
      overflowX: getComputedStyle(el).overflowX,
      wraps: getComputedStyle(el).flexWrap,
    }));
    expect(nav.overflowX).toBe('auto');
    expect(nav.wraps).toBe('nowrap');
  });

  it('shows the queues with Skip and Clear a finger can hit, without sideways scrolling', async () => {
    // The camera rule's webhook never answers: the first follow's call runs, the others wait in its queue
    // (and stay there through the screenshots below: each call holds the queue for its 5 s timeout).
    for (let i = 0; i < 40; i++) {
      await api('/api/events?test=true', {
        method: 'POST',
        body: JSON.stringify({
          type: 'follow',
          user: { uniqueId: `fan${i}`, nickname: `Fan ${i}` },
          data: {},
        }),
      });
    }
    await show(VIEWS[1]);
    const row = page.locator('tr[data-queue="camera-moves"]');
    const waiting = async () => Number(await row.locator('td').nth(2).textContent());
    await expect.poll(waiting).toBeGreaterThan(30);
    for (const name of ['Skip', 'Clear']) {
      const box = await row.getByRole('button', { name }).boundingBox();
      expect(box?.width, `${name} width`).toBeGreaterThanOrEqual(TOUCH);
      expect(box?.height, `${name} height`).toBeGreaterThanOrEqual(TOUCH);
    }
    const widths = await page.evaluate(() => [
      document.documentElement.scrollWidth,
      document.body.scrollWidth,
    ]);
    expect(Math.max(...widths)).toBeLessThanOrEqual(PHONE.width);
  });

  for (const view of VIEWS) {
    it(`shows ${view.heading}${view.name === 'editor' ? ' (the overlay editor)' : ''} without sideways scrolling, with targets a finger can hit`, async () => {
      await show(view);
      const widths = await page.evaluate((w) => {
        // What sticks out, to name it when a view is too wide: elements reaching past the right edge.
        const wide = Array.from(document.querySelectorAll<HTMLElement>('main *'))
          .filter((el) => el.getBoundingClientRect().right > w + 0.5)
          .slice(-5)
          .map(
            (el) =>
              `${el.tagName.toLowerCase()}.${el.className} ${Math.round(el.getBoundingClientRect().right)}`,
          );
        return { doc: document.documentElement.scrollWidth, body: document.body.scrollWidth, wide };
      }, PHONE.width);
      expect(widths.doc, widths.wide.join(', ')).toBeLessThanOrEqual(PHONE.width);
      expect(widths.body).toBeLessThanOrEqual(PHONE.width);
      expect(await smallTargets()).toEqual([]);
      if (process.env.PHONE_SCREENSHOTS === '1') {
        await page.screenshot({ path: `docs/images/phone-${view.name}.png`, type: 'png' });
      }
    });
  }

  for (const view of VIEWS.filter((v) =>
    ['status', 'test', 'rules', 'settings', 'editor'].includes(v.name),
  )) {
    it(`keeps the focused control in sight below the top bar while tabbing through ${view.heading}${view.name === 'editor' ? ' (editor)' : ''}`, async () => {
      await show(view);
      await page.getByRole('heading', { name: view.heading, level: 1 }).focus();
      const hidden: string[] = [];
      let checked = 0;
      for (let i = 0; i < 25; i++) {
        await page.keyboard.press('Tab');
        const where = await page.evaluate(() => {
          const el = document.activeElement as HTMLElement | null;
          if (!el || el === document.body) return undefined;
          const bar = document.querySelector('.topbar')?.getBoundingClientRect();
          const box = el.getBoundingClientRect();
          // The bar's own controls and the skip link (shown above the bar when focused) are always in sight.
          const inBar = !!el.closest('.topbar') || el.classList.contains('skip-link');
          const barBottom =
            bar && getComputedStyle(document.querySelector('.topbar') as Element).position === 'sticky'
              ? bar.bottom
              : 0;
          return {
            text: `${el.tagName.toLowerCase()} ${(el.textContent || el.getAttribute('aria-label') || '').trim().slice(0, 30)}`,
            visible: inBar || (box.top >= barBottom - 0.5 && box.bottom <= window.innerHeight + 0.5),
            inCanvas: !!el.closest('.canvas'),
          };
        });
        if (!where || where.inCanvas) continue;
        checked++;
        if (!where.visible) hidden.push(where.text);
      }
      expect(checked).toBeGreaterThan(5);
      expect(hidden).toEqual([]);
    });
  }
});
