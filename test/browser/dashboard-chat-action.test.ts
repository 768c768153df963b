// The chat action in the dashboard, in Chromium: the rules editor edits its message and where it goes,
// Test this rule shows the text it would send (cut to the platform's limit) and sends none, and the
// Actions view shows a skipped chat action with its reason rather than as a failure.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { api, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { openTab, signInDashboard } from '../support/dashboard.js';
import { type FakeChatSender, fakeChatSender } from '../support/fakes/chat-sender.js';

const POLL = { timeout: 10_000, interval: 50 };

let daemon: TestDaemon;
let browser: Browser;
let page: Page;
let youtube: FakeChatSender;

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  youtube = fakeChatSender('youtube', 'The Streamer');
  daemon.chatSenders.register(youtube);
  const context = await browser.newContext({ viewport: { width: 1300, height: 900 } });
  context.setDefaultTimeout(10_000);
  page = await context.newPage();
  await signInDashboard(page, daemon);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

describe('the chat action in the dashboard', () => {
  it('is edited like the other kinds and tried without sending anything', async () => {
    await openTab(page, 'Rules');
    await page.getByRole('button', { name: 'New rule', exact: true }).click();
    const rule = page.locator('li.rule').last();
    const action = rule.locator('fieldset.action').first();
    await action.getByLabel('Does').selectOption('chat');
    const message = action.getByLabel(/^Message/);
    // An empty message is refused beside the field.
    await message.fill('');
    await rule.locator('[id$="-actions-0-text-error"]').waitFor();
    await message.fill(`Thank you {user.nickname} for the {data.giftName}! ${'♥'.repeat(250)}`);
    await action.getByLabel('Where').selectOption('youtube');

    await rule.getByRole('button', { name: 'Test this rule' }).click();
    const result = rule.getByRole('status', { name: 'Test result' });
    const preview = result.getByRole('list', { name: /Chat the rule would send/ });
    const line = preview.locator('[data-chat="would-send"][data-chat-platform="youtube"]');
    await line.waitFor(POLL);
    // YouTube takes 200 code points: the hearts are cut, the last one replaced by "…".
    const text = (await line.locator('q').textContent()) ?? '';
    expect(text.startsWith('Thank you Test viewer for the Rose! ♥')).toBe(true);
    expect(Array.from(text)).toHaveLength(200);
    expect(text.endsWith('♥…')).toBe(true);
    await result
      .locator('[data-outcome="skipped"]')
      .getByText('Action 1 (chat): not run: a rule test sends no chat')
      .waitFor();
    expect(youtube.sent).toEqual([]);

    await page.getByRole('button', { name: 'Save rules' }).click();
    await page.getByText('Saved 1 rule.').waitFor();
    const [saved] = (await (await api(daemon, 'GET', '/api/rules')).json()) as Record<string, unknown>[];
    expect(saved).toMatchObject({
      actions: [{ kind: 'chat', text: expect.stringContaining('{user.nickname}'), platform: 'youtube' }],
    });
  });

  it('shows a skipped chat action in the Actions log with its reason, not as a failure', async () => {
    const rules = [
      {
        id: 'thanks',
        name: 'Thanks',
        trigger: 'follow',
        actions: [{ kind: 'chat', text: 'Welcome {user.nickname}' }],
      },
    ];
    expect((await api(daemon, 'PUT', '/api/rules', rules)).status).toBe(200);
    const follow = {
      type: 'follow',
      platform: 'tiktok',
      user: { uniqueId: 'tia', nickname: 'Tia' },
      data: {},
    };
    expect((await api(daemon, 'POST', '/api/events', follow)).status).toBe(202);
    await openTab(page, 'Actions');
    const entry = page
      .locator('.action-log li[data-skipped="yes"]')
      .filter({ hasText: 'rule “Thanks” action 1 (chat): skipped — TikTok does not allow sending chat' });
    await entry.waitFor(POLL);
    expect(await entry.getAttribute('data-ok')).toBe('yes');
  });

  it("shows the test panel's !points answer in the panel and posts nothing to the chat", async () => {
    const twitch = fakeChatSender('twitch', 'The Streamer');
    daemon.chatSenders.register(twitch);
    await openTab(page, 'Test events');
    await page.getByLabel('Event', { exact: true }).selectOption('chat');
    await page.getByLabel('Platform', { exact: true }).selectOption('twitch');
    await page.getByLabel('Message', { exact: true }).fill('!points');
    await page.getByRole('button', { name: 'Send chat event' }).click();
    const entry = page.locator('.event-log > li').first();
    const answer = entry.locator('.chat-answer[data-command="!points"]');
    await answer.waitFor(POLL);
    expect(await answer.textContent()).toBe(
      'Chat command !points answers on Twitch: “Test Viewer has 0 points” (shown here only: a test posts nothing to the chat)',
    );
    expect(await entry.getByText('No rule fired').count()).toBe(0);
    const log = (await (await api(daemon, 'GET', '/api/actions/log')).json()) as { ruleId: string }[];
    expect(log.filter((e) => e.ruleId === 'command:points')).toEqual([]);
    expect(twitch.sent).toEqual([]);
  });
});
