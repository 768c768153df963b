// The dashboard's Settings in Chromium: the built-in chat commands turned on and edited (trigger, answer,
// cooldowns typed in seconds and kept in milliseconds), a trigger both commands would share refused
// beside the field, and what was saved shown again after a reload.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

const POLL = { timeout: 10_000, interval: 50 };

let daemon: TestDaemon;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  const adminKey = (await readFile(join(daemon.dataDir.root, 'admin.key'), 'utf8')).trim();
  const context = await browser.newContext({ viewport: { width: 1300, height: 800 } });
  context.setDefaultTimeout(10_000);
  page = await context.newPage();
  await page.goto(`${daemon.url}/dashboard#key=${encodeURIComponent(adminKey)}`);
  await page.getByRole('heading', { name: 'Overlays', level: 1 }).waitFor();
});

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

describe('chat commands in Settings', () => {
  it('turns a command on, edits it with cooldowns in seconds, and refuses one trigger for both', async () => {
    await page.goto(`${daemon.url}/dashboard#/settings`);
    const group = page.getByRole('group', { name: 'Chat commands', exact: true });
    await group.waitFor();
    expect(await group.getByLabel('Points command: trigger (one word, any case)').inputValue()).toBe(
      '!points',
    );
    expect(await group.getByLabel('Points command: answer').inputValue()).toBe(
      '{user.nickname} has {points} points',
    );
    expect(await group.getByLabel('Top command: seconds between two answers').inputValue()).toBe('10');
    expect(
      await group.getByLabel('Top command: seconds before answering the same viewer again').inputValue(),
    ).toBe('30');

    // Both answer by default; the streamer turns !top off.
    expect(await group.getByLabel(/^Points command on/).isChecked()).toBe(true);
    await group.getByLabel(/^Top command on/).uncheck();
    await group.getByLabel('Points command: trigger (one word, any case)').fill('!score');
    await group.getByLabel('Points command: answer').fill('{user.nickname}: {points}');
    await group.getByLabel('Points command: seconds between two answers').fill('2.5');
    await group.getByLabel('Points command: seconds before answering the same viewer again').fill('60');
    const topTrigger = group.getByLabel('Top command: trigger (one word, any case)');
    await topTrigger.fill('!SCORE');
    await group.getByLabel('Top command: answer').focus();
    const error = page.locator('#set-cmd-top-trigger-error');
    await error.waitFor();
    expect(await error.textContent()).toBe("must differ from the points command's trigger");
    await topTrigger.fill('!best');
    await expect.poll(() => error.count(), POLL).toBe(0);

    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved. In force now.').waitFor();
    const stored = JSON.parse(await readFile(join(daemon.dataDir.root, 'settings.json'), 'utf8'));
    expect(stored.commands).toEqual({
      points: {
        enabled: true,
        trigger: '!score',
        text: '{user.nickname}: {points}',
        cooldownMs: 2500,
        userCooldownMs: 60_000,
      },
      top: {
        enabled: false,
        trigger: '!best',
        text: 'Top: {top}',
        cooldownMs: 10_000,
        userCooldownMs: 30_000,
      },
    });

    await page.reload();
    const after = page.getByRole('group', { name: 'Chat commands', exact: true });
    expect(await after.getByLabel('Points command: seconds between two answers').inputValue()).toBe('2.5');
    expect(await after.getByLabel(/^Points command on/).isChecked()).toBe(true);
    expect(await after.getByLabel('Top command: trigger (one word, any case)').inputValue()).toBe('!best');
  });
});
