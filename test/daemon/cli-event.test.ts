// `overlay-daemon event …` as a user runs it (a child process) against a real daemon: the event arrives, rules fire, mistakes are named.
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killCliProcesses, runCli } from '../support/cli.js';
import { api, makeDataDir, startTestDaemon, subscribe, type TestDaemon } from '../support/daemon.js';
import type { TestWsClient } from '../support/ws.js';

// No usable default data directory: every call names the one it means.
const NO_DEFAULT_DATA_DIR = { OVERLAY_DATA_DIR: '/nonexistent/overlay-daemon-test' };

let daemon: TestDaemon;
let dataDir: string;
let overlayId: string;
let client: TestWsClient;

beforeAll(async () => {
  dataDir = await makeDataDir();
  daemon = await startTestDaemon({ dataDir });
  overlayId = daemon.overlays.list()[0]!.id;
  const rules = [
    {
      id: 'thanks',
      trigger: 'gift',
      conditions: { giftName: 'Rose' },
      actions: [
        {
          overlayId,
          widgetId: 'alerts',
          command: 'show-alert',
          payload: { text: '{user.nickname} sent {data.repeatCount} × {data.giftName}', duration: 3000 },
        },
      ],
    },
  ];
  expect((await api(daemon, 'PUT', '/api/rules', rules)).status).toBe(200);
  client = await subscribe(daemon, overlayId);
});
afterAll(async () => {
  killCliProcesses();
  client?.close();
  await daemon?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const target = () => ['--port', String(daemon.port), '--data-dir', dataDir];

describe('overlay-daemon event', () => {
  it('sends a gift that reaches the overlay and fires the rule, and says so', async () => {
    const args = ['gift', '--user', 'alice', '--nickname', 'Alice', '--count', '5', '--diamonds', '1'];
    const result = await runCli(['event', ...args, ...target()], NO_DEFAULT_DATA_DIR);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe('sent gift event: Alice sent 5 × Rose\nfired 1 rule: thanks\n');
    expect(await client.next((m) => m.type === 'stream-event')).toEqual({
      type: 'stream-event',
      seq: expect.any(Number),
      at: expect.any(Number),
      event: {
        type: 'gift',
        // Posted through the control API: from no platform.
        platform: 'api',
        user: { uniqueId: 'alice', nickname: 'Alice' },
        data: { giftName: 'Rose', repeatCount: 5, diamondCount: 1 },
      },
    });
    expect(await client.next((m) => m.type === 'overlay-command')).toMatchObject({
      command: 'show-alert',
      payload: { text: 'Alice sent 5 × Rose' },
    });
  });

  it('names the fired rules by their names, as the dashboard does (a rule without one by its id)', async () => {
    const rules = (await (await api(daemon, 'GET', '/api/rules')).json()) as { id: string }[];
    const named = [
      ...rules,
      {
        id: 'rule-qly30d',
        name: 'Rose confetti',
        trigger: 'gift',
        actions: [{ overlayId, widgetId: 'alerts', command: 'show-alert', payload: { text: 'x' } }],
      },
    ];
    expect((await api(daemon, 'PUT', '/api/rules', named)).status).toBe(200);
    try {
      const result = await runCli(['event', 'gift', ...target()], NO_DEFAULT_DATA_DIR);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout.split('\n')[1]).toBe('fired 2 rules: thanks, Rose confetti');
    } finally {
      expect((await api(daemon, 'PUT', '/api/rules', rules)).status).toBe(200);
    }
  });

  it('sends likes and chat; no rule fires for them, and the test likes move no goal', async () => {
    const goalOf = () => daemon.overlays.get(overlayId)?.widgets.find((w) => w.type === 'goal');
    const before = goalOf();
    expect(before).toBeDefined();
    const [likes, chat] = await Promise.all([
      runCli(['event', 'like', '--likes', '10', ...target()], NO_DEFAULT_DATA_DIR),
      runCli(['event', 'chat', '--user', 'bob', '--comment', 'hi there', ...target()], NO_DEFAULT_DATA_DIR),
    ]);
    expect(likes).toMatchObject({ code: 0, stdout: 'sent like event: Tester liked ×10\nno rule fired\n' });
    expect(chat).toMatchObject({ code: 0, stdout: 'sent chat event: bob: hi there\nno rule fired\n' });
    // The command's events are test events: shown on the page, never kept in a goal's progress.
    expect(goalOf()).toEqual(before);
  });

  it("prints a chat command's answer to a test chat, which posts nothing to the chat", async () => {
    const chat = await runCli(
      ['event', 'chat', '--user', 'bob', '--nickname', 'Bob', '--comment', '!points', ...target()],
      NO_DEFAULT_DATA_DIR,
    );
    expect(chat).toMatchObject({
      code: 0,
      stdout:
        'sent chat event: Bob: !points\nno rule fired\n' +
        'chat command !points answers (printed here only, not sent): "Bob has 0 points"\n',
    });
  });

  it('refuses bad input with one line naming the option, exit 2, and sends nothing', async () => {
    const before = client.received.length;
    const results = await Promise.all([
      runCli(['event', 'gift', '--count', '0', ...target()], NO_DEFAULT_DATA_DIR),
      runCli(['event', 'gift', '--count', 'five', ...target()], NO_DEFAULT_DATA_DIR),
      runCli(['event', 'like', '--gift', 'Rose', ...target()], NO_DEFAULT_DATA_DIR),
      runCli(['event', 'raid', ...target()], NO_DEFAULT_DATA_DIR),
      runCli(['event', 'gift', '--colour', 'red', ...target()], NO_DEFAULT_DATA_DIR),
    ]);
    for (const r of results) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n')[0]).toMatch(/^overlay-daemon event: /);
    }
    expect(results[0]!.stderr).toContain('--count (how many gifts were sent) must be at least 1, got 0');
    expect(results[1]!.stderr).toContain('--count must be a whole number, got "five"');
    expect(results[2]!.stderr).toContain('--gift applies to gift events, not like');
    expect(results[3]!.stderr).toContain('unknown event type "raid"');
    expect(results[4]!.stderr).toContain('--colour');
    expect(client.received.length).toBe(before);
  });

  it('says in words what a negative number means, even written as a separate argument', async () => {
    const results = await Promise.all([
      runCli(['event', 'gift', '--count', '-5', ...target()], NO_DEFAULT_DATA_DIR),
      runCli(['event', 'like', '--likes=-3', ...target()], NO_DEFAULT_DATA_DIR),
      runCli(['event', 'gift', '--diamonds', '-1', ...target()], NO_DEFAULT_DATA_DIR),
    ]);
    expect(results.map((r) => r.code)).toEqual([2, 2, 2]);
    expect(results[0]!.stderr).toContain('--count (how many gifts were sent) must be at least 1, got -5');
    expect(results[1]!.stderr).toContain('--likes (how many new likes) must be at least 1, got -3');
    expect(results[2]!.stderr).toContain(
      '--diamonds (diamonds one gift is worth) must be at least 0, got -1',
    );
  });

  it('finds the daemon of the data directory without --port, and a gift is worth a diamond by default', async () => {
    const result = await runCli(
      ['event', 'gift', '--user', 'carol', '--data-dir', dataDir],
      NO_DEFAULT_DATA_DIR,
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(
      await client.next((m) => m.type === 'stream-event' && JSON.stringify(m).includes('carol')),
    ).toMatchObject({
      event: { type: 'gift', data: { repeatCount: 1, diamondCount: 1 } },
    });
  });

  it('exits 1 when no server answers, when the key is missing or when the key is refused', async () => {
    const otherDir = await makeDataDir();
    const other = await startTestDaemon({ dataDir: otherDir });
    try {
      const [down, noKey, wrongKey] = await Promise.all([
        runCli(['event', 'follow', '--port', '9', '--data-dir', dataDir], NO_DEFAULT_DATA_DIR),
        runCli(
          ['event', 'follow', '--port', String(daemon.port), '--data-dir', `${dataDir}/nothing-here`],
          NO_DEFAULT_DATA_DIR,
        ),
        runCli(
          ['event', 'follow', '--port', String(daemon.port), '--data-dir', otherDir],
          NO_DEFAULT_DATA_DIR,
        ),
      ]);
      expect(down.code).toBe(1);
      expect(down.stderr).toContain('no overlay server is answering at http://127.0.0.1:9/api/events');
      expect(noKey.code).toBe(1);
      expect(noKey.stderr).toContain('admin.key');
      expect(wrongKey.code).toBe(1);
      expect(wrongKey.stderr).toContain('401 unauthenticated');
    } finally {
      await other.stop();
      await rm(otherDir, { recursive: true, force: true });
    }
  });

  it('has --help, and the main help lists the command', async () => {
    const [help, main] = await Promise.all([
      runCli(['event', '--help'], NO_DEFAULT_DATA_DIR),
      runCli(['--help'], NO_DEFAULT_DATA_DIR),
    ]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: overlay-daemon event <type>/);
    expect(help.stdout).toContain('--diamonds N');
    expect(main.stdout).toContain('overlay-daemon event <type>');
  });
});
