// The dashboard in Chromium, as a newcomer and a keyboard user meet it: an address per view (reload and
// Back), one level-one heading per view and a skip link, focus that follows each action, field messages
// in plain words only once a field was touched, Settings in groups with points and history retention,
// canvas widgets named by their text, the speech hint of each trigger, the rule limit's count and the
// premium page of the remote config.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { LicenceManager } from '../../daemon/src/licence/licence-manager.js';
import { DEFAULT_CONFIG } from '../../shared/config.js';
import { launchChromium } from '../support/chromium.js';
import { makeDataDir, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { freePort } from '../support/local-stack.js';

const POLL = { timeout: 10_000, interval: 50 };

let daemon: TestDaemon;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let adminKey: string;

async function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${daemon.url}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json', ...init.headers },
  });
}

/** Loads the dashboard afresh on a view's address (a reload: data saved through the API shows). */
async function visit(hash: string): Promise<void> {
  await page.goto(`${daemon.url}/dashboard${hash}`);
  await page.reload();
}

const openTab = (name: string) =>
  page.getByRole('navigation', { name: 'Sections' }).getByRole('button', { name }).click();

/** What has keyboard focus: its tag, id, accessible text and whether it is inside the viewport. */
const focused = (p: Page = page) =>
  p.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    const box = el?.getBoundingClientRect();
    return {
      tag: el?.tagName.toLowerCase(),
      id: el?.id ?? '',
      text: (el?.textContent ?? '').trim(),
      inView: box ? box.top >= 0 && box.bottom <= window.innerHeight : false,
    };
  });

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  adminKey = (await readFile(join(daemon.dataDir.root, 'admin.key'), 'utf8')).trim();
  context = await browser.newContext({ viewport: { width: 1300, height: 800 } });
  context.setDefaultTimeout(10_000);
  page = await context.newPage();
  await page.goto(`${daemon.url}/dashboard#key=${encodeURIComponent(adminKey)}`);
  await page.getByRole('heading', { name: 'Overlays', level: 1 }).waitFor();
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

describe('views', () => {
  it('each view has its own address: a reload stays on it and Back returns to the one before', async () => {
    await openTab('Rules');
    await page.getByRole('heading', { name: 'Rules', level: 1 }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/rules');
    await page.reload();
    await page.getByRole('heading', { name: 'Rules', level: 1 }).waitFor();
    await openTab('Settings');
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/settings');
    await page.goBack();
    await page.getByRole('heading', { name: 'Rules', level: 1 }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/rules');
  });

  it('every view has exactly one level-one heading, its name, and the keyboard lands on it', async () => {
    for (const name of [
      'Overlays',
      'Rules',
      'Media',
      'Test events',
      'Sources',
      'Actions',
      'History',
      'Settings',
      'Status',
    ]) {
      await openTab(name);
      await page.getByRole('heading', { name, level: 1 }).waitFor();
      expect(await page.locator('h1').count(), name).toBe(1);
      await expect.poll(() => focused(), POLL).toMatchObject({ tag: 'h1', text: name });
    }
  });

  it('a skip link is the first stop of the keyboard and moves it to the main content', async () => {
    const fresh = await context.newPage();
    try {
      await fresh.goto(`${daemon.url}/dashboard#key=${encodeURIComponent(adminKey)}`);
      await fresh.getByRole('heading', { name: 'Overlays', level: 1 }).waitFor();
      await fresh.goto(`${daemon.url}/dashboard#/media`);
      await fresh.reload();
      await fresh.getByRole('heading', { name: 'Media', level: 1 }).waitFor();
      await fresh.keyboard.press('Tab');
      expect(await focused(fresh)).toMatchObject({ tag: 'a', text: 'Skip to main content' });
      expect(await fresh.getByRole('link', { name: 'Skip to main content' }).isVisible()).toBe(true);
      await fresh.keyboard.press('Enter');
      expect(await focused(fresh)).toMatchObject({ tag: 'main', id: 'main' });
      // The view's address is kept.
      expect(new URL(fresh.url()).hash).toBe('#/media');
    } finally {
      await fresh.close();
    }
  });
});

describe('overlays', () => {
  it('the new-overlay form: Create is the primary submit, Cancel a plain button; messages only once touched, in plain words, gone when fixed; the editor takes focus', async () => {
    await openTab('Overlays');
    await page.getByRole('button', { name: 'New overlay' }).click();
    // The form opens with the keyboard in its first field.
    await expect.poll(() => focused(), POLL).toMatchObject({ id: 'new-overlay-name' });
    const create = page.getByRole('button', { name: 'Create overlay' });
    const cancel = page.getByRole('button', { name: 'Cancel' });
    expect(await create.getAttribute('type')).toBe('submit');
    expect(await create.getAttribute('class')).toContain('primary');
    expect(await cancel.getAttribute('type')).toBe('button');
    expect(await cancel.getAttribute('class')).not.toContain('primary');

    const name = page.locator('#new-overlay-name');
    await name.fill('');
    // Emptied but not left: nothing is said yet.
    expect(await page.locator('#new-overlay-name-error').count()).toBe(0);
    await page.locator('#new-overlay-width').focus();
    const error = page.locator('#new-overlay-name-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('must not be empty');
    expect(await page.locator('.meta-form').textContent()).not.toMatch(/Invalid|Expected/);
    await name.fill('Keyboard scene');
    await expect.poll(() => error.count(), POLL).toBe(0);

    await cancel.click();
    await expect.poll(() => focused(), POLL).toMatchObject({ tag: 'button', text: 'New overlay' });

    await page.getByRole('button', { name: 'New overlay' }).click();
    await page.locator('#new-overlay-name').fill('Keyboard scene');
    await page.getByRole('button', { name: 'Create overlay' }).click();
    await page.getByRole('heading', { name: 'Keyboard scene', level: 1 }).waitFor();
    await expect.poll(() => focused(), POLL).toMatchObject({ tag: 'h1', text: 'Keyboard scene' });
    // The editor has its own address: a reload opens it again.
    const id = (await page.locator('section.editor').getAttribute('data-overlay-id')) ?? '';
    expect(new URL(page.url()).hash).toBe(`#/overlays/${id}`);
    await page.reload();
    await page.getByRole('heading', { name: 'Keyboard scene', level: 1 }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { name: 'Overlays', level: 1 }).waitFor();
  });

  it('canvas widgets are named by the text they show', async () => {
    const res = await api('/api/overlays', {
      method: 'POST',
      body: JSON.stringify({
        name: 'Named widgets',
        width: 1920,
        height: 1080,
        widgets: [
          { id: 'hello', type: 'text', x: 10, y: 20, content: 'Welcome to the stream' },
          {
            id: 'likes',
            type: 'goal',
            x: 10,
            y: 300,
            title: 'Likes',
            source: 'likes',
            target: 100,
            current: 5,
          },
        ],
      }),
    });
    const { id } = (await res.json()) as { id: string };
    await visit(`#/overlays/${id}`);
    await page.getByRole('heading', { name: 'Named widgets', level: 1 }).waitFor();
    const canvas = page.locator('.canvas');
    const text = canvas.getByRole('button', { name: /^Welcome to the stream, text widget at 10, 20$/ });
    const goal = canvas.getByRole('button', { name: /^Likes · 5\/100 likes, goal widget at 10, 300$/ });
    expect(await text.count()).toBe(1);
    expect(await goal.count()).toBe(1);

    // The editor's field messages are in plain words too.
    await text.click();
    await page.getByLabel('Font size (px)').fill('5000');
    const error = page.locator('#prop-fontSize-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('must be at most 1000');
    await page.getByLabel('Font size (px)').fill('48');
    await expect.poll(() => error.count(), POLL).toBe(0);
  });
});

describe('rules', () => {
  it('a new rule far down the list comes into view with its name focused; messages wait for a touch or Save; saving focuses the outcome', async () => {
    const overlayId = daemon.overlays.list()[0]!.id;
    const rules = Array.from({ length: 8 }, (_, i) => ({
      id: `r${i}`,
      name: `Rule ${i}`,
      trigger: 'follow',
      actions: [{ overlayId, widgetId: 'w', command: 'reset', payload: {} }],
    }));
    expect((await api('/api/rules', { method: 'PUT', body: JSON.stringify(rules) })).status).toBe(200);
    await visit('#/rules');
    await page.locator('li.rule').nth(7).waitFor();

    await page.getByRole('button', { name: 'New rule', exact: true }).click();
    await expect.poll(() => focused(), POLL).toMatchObject({ id: 'rule-8-name', inView: true });
    // Nothing typed yet: no message anywhere, although the new rule's action names no widget yet.
    const newRule = page.locator('li.rule').last();
    await newRule.getByLabel('Widget', { exact: true }).selectOption('');
    await page.locator('#rule-8-name').focus();
    expect(await page.locator('#rule-8-cooldownMs-error').count()).toBe(0);
    const cooldown = newRule.getByLabel('Cooldown (ms)', { exact: true });
    await cooldown.fill('-5');
    const cooldownError = page.locator('#rule-8-cooldownMs-error');
    await cooldownError.waitFor();
    expect(await cooldownError.textContent()).toBe('must be at least 0');
    await cooldown.fill('0');
    await expect.poll(() => cooldownError.count(), POLL).toBe(0);

    // Save shows what is left (the widget), in plain words, with the keyboard on the outcome.
    await page.getByRole('button', { name: 'Save rules' }).click();
    const widgetError = page.locator('#rule-8-actions-0-widgetId-error');
    await widgetError.waitFor();
    expect(await widgetError.textContent()).not.toMatch(/Invalid|Expected/);
    await expect
      .poll(() => focused(), POLL)
      .toMatchObject({ tag: 'p', text: expect.stringMatching(/^Not saved/) });

    await page.getByRole('button', { name: 'Discard changes' }).click();
    await expect.poll(() => focused(), POLL).toMatchObject({ text: expect.stringMatching(/discarded/) });
    await page.getByRole('button', { name: 'Move Rule 3 up' }).click();
    await expect.poll(() => focused(), POLL).toMatchObject({ tag: 'button' });
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Move Rule 3 up',
    );
    await page.getByRole('button', { name: 'Save rules' }).click();
    await expect.poll(() => focused(), POLL).toMatchObject({ tag: 'p', text: 'Saved 8 rules.' });
    expect(((await (await api('/api/rules')).json()) as { id: string }[])[2]?.id).toBe('r3');
  });

  it('removing an action leaves the keyboard on the view, not on the page body', async () => {
    const overlayId = daemon.overlays.list()[0]!.id;
    const one = [
      {
        id: 'two-actions',
        name: 'Two actions',
        trigger: 'follow',
        actions: [
          { overlayId, widgetId: 'w', command: 'reset', payload: {} },
          { overlayId, widgetId: 'w', command: 'reset', payload: {} },
        ],
      },
    ];
    expect((await api('/api/rules', { method: 'PUT', body: JSON.stringify(one) })).status).toBe(200);
    await visit('#/rules');
    const rule = page.locator('li.rule').first();
    await rule.getByRole('button', { name: 'Remove action' }).last().click();
    await expect.poll(() => focused(), POLL).toMatchObject({ tag: 'h1', text: 'Rules' });
    await page.getByRole('button', { name: 'Discard changes' }).click();
  });

  it("the text to say names the placeholders of the rule's trigger", async () => {
    await visit('#/rules');
    const rule = page.locator('li.rule').first();
    await rule.waitFor();
    await rule.getByLabel('When', { exact: true }).selectOption('gift');
    await rule.getByLabel('Does', { exact: true }).first().selectOption('speak');
    const said = rule.getByLabel(/^Text to say/);
    const label = async () =>
      (await rule.locator('label', { hasText: 'Text to say' }).first().textContent()) ?? '';
    expect(await label()).toContain('{data.giftName}');
    expect(await label()).not.toContain('{data.comment}');
    expect(await said.inputValue()).not.toContain('{data.comment}');
    await rule.getByLabel('When', { exact: true }).selectOption('chat');
    expect(await label()).toContain('{data.comment}');
    await page.getByRole('button', { name: 'Discard changes' }).click();
  });
});

describe('settings', () => {
  it('groups the settings and saves viewer points and how long events are kept', async () => {
    await visit('#/settings');
    for (const group of ['OBS', 'Streamer.bot', 'Speech', 'Viewer points', 'Event history'])
      await page.getByRole('group', { name: group, exact: true }).waitFor();
    const points = page.getByRole('group', { name: 'Viewer points', exact: true });
    await points.getByLabel('Points: per like').fill('2');
    await points.getByLabel('Points: per chat message').fill('5');
    const days = page.getByLabel(/^Keep events for/);
    await days.fill('0');
    await page.getByLabel(/OBS WebSocket address/).focus();
    const daysError = page.locator('#set-journal-days-error');
    await daysError.waitFor();
    expect(await daysError.textContent()).toBe('must be at least 1');
    await days.fill('30');
    await expect.poll(() => daysError.count(), POLL).toBe(0);
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => focused(), POLL).toMatchObject({ tag: 'p', text: 'Saved. In force now.' });
    const stored = JSON.parse(await readFile(join(daemon.dataDir.root, 'settings.json'), 'utf8'));
    expect(stored).toMatchObject({ points: { perLike: 2, perChat: 5 }, journal: { retentionDays: 30 } });
    await page.reload();
    expect(await page.getByLabel(/^Keep events for/).inputValue()).toBe('30');
  });

  it("a field's message takes the keyboard on Save and goes once the field is right", async () => {
    await visit('#/settings');
    const address = page.getByLabel(/OBS WebSocket address/);
    await address.fill('http://not-a-websocket');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const error = page.locator('#set-obs-url-error');
    await error.getByText('must be a ws or wss URL').waitFor();
    // The keyboard goes to the field to fix.
    await expect.poll(() => focused(), POLL).toMatchObject({ id: 'set-obs-url' });
    await address.fill('ws://127.0.0.1:4455');
    await expect.poll(() => error.count(), POLL).toBe(0);
  });

  it('turns the TikFinity event feed on and off: the daemon listens on the port it names', async () => {
    const port = await freePort();
    await visit('#/settings');
    const group = page.getByRole('group', { name: 'TikFinity event feed', exact: true });
    const portField = group.getByLabel(/^TikFinity event feed: port/);
    expect(await portField.inputValue()).toBe('21213');
    await portField.fill('70000');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.locator('#set-tikfinity-port-error').getByText('must be a port from 1 to 65535').waitFor();
    await portField.fill(String(port));
    await group.getByLabel('TikFinity event feed on').check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => focused(), POLL).toMatchObject({ tag: 'p', text: 'Saved. In force now.' });
    const status = async () =>
      ((await (await fetch(`${daemon.url}/status`)).json()) as { tikfinityFeed?: { state: string } })
        .tikfinityFeed;
    await expect.poll(status, POLL).toMatchObject({ state: 'listening', port });
    const game = new WebSocket(`ws://127.0.0.1:${port}/`);
    await new Promise((resolve, reject) => {
      game.once('open', resolve);
      game.once('error', reject);
    });
    const closed = new Promise<number>((resolve) => game.once('close', (code) => resolve(code)));
    await group.getByLabel('TikFinity event feed on').uncheck();
    await page.getByRole('button', { name: 'Save settings' }).click();
    expect(await closed).toBe(1001);
    await expect.poll(status, POLL).toBeUndefined();
  });
});

describe('the free tier', () => {
  it('counts the rules saved, and See Premium opens the premium page of the remote config', async () => {
    const dataDir = await makeDataDir();
    const pageUrl = 'https://members.example/overlay-daemon/premium';
    await writeFile(
      join(dataDir, 'remote-config.json'),
      JSON.stringify({ ...DEFAULT_CONFIG, upgrade: { ...DEFAULT_CONFIG.upgrade, pageUrl } }),
    );
    const licence = new LicenceManager({ dataDir, issuer: 'http://gatekeeper.invalid', log: () => {} });
    const free = await startTestDaemon({ dataDir, limits: licence });
    await licence.load();
    const tab = await context.newPage();
    try {
      const key = (await readFile(join(dataDir, 'admin.key'), 'utf8')).trim();
      const overlayId = free.overlays.list()[0]!.id;
      const max = DEFAULT_CONFIG.tiers.free.maxRules;
      const four = Array.from({ length: max - 1 }, (_, i) => ({
        id: `r${i}`,
        trigger: 'follow',
        actions: [{ overlayId, widgetId: 'w', command: 'reset', payload: {} }],
      }));
      const put = await fetch(`${free.url}/api/rules`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(four),
      });
      expect(put.status).toBe(200);
      await tab.goto(`${free.url}/dashboard#key=${encodeURIComponent(key)}`);
      await tab.getByRole('navigation', { name: 'Sections' }).getByRole('button', { name: 'Rules' }).click();
      await tab
        .locator('li.rule')
        .nth(max - 2)
        .waitFor();
      await tab.getByRole('button', { name: 'New rule', exact: true }).click();
      await tab.getByRole('button', { name: 'New rule', exact: true }).click();
      await tab.getByRole('button', { name: 'Save rules' }).click();
      const notice = tab.locator('[data-limit]');
      await notice.getByText('Free tier limit reached').waitFor();
      const text = (await notice.textContent()) ?? '';
      expect(text).toContain(`allows ${max} rules, and you have ${max - 1} saved`);
      expect(await notice.getByRole('link', { name: 'See Premium' }).getAttribute('href')).toBe(pageUrl);
      // The refusal has the keyboard, not the page's body.
      expect(await tab.evaluate(() => document.activeElement?.closest('[data-rules-refusal]') !== null)).toBe(
        true,
      );
    } finally {
      await tab.close();
      await free.stop();
    }
  });
});
