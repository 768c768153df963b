// Rule actions beyond overlay commands: webhooks and Streamer.bot against local receivers,
// delays and named queues, the action log, and that none of it holds up event delivery.
import { readFile, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SettingsView } from '../../shared/settings.js';
import { api, startTestDaemon, subscribe, type TestDaemon } from '../support/daemon.js';
import { until, waitFor } from '../support/wait.js';
import type { TestWsClient } from '../support/ws.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A local HTTP receiver; `answer` decides per request (a `never` receiver holds the request open). */
class Receiver {
  readonly requests: Received[] = [];
  answer: (req: Received, res: ServerResponse) => void = (_req, res) => {
    res.writeHead(200);
    res.end('ok');
  };
  readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      this.requests.push(received);
      this.answer(received, res);
    });
  });
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }
  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }
}

const receiver = new Receiver();
const streamerbot = new Receiver();
let daemon: TestDaemon;
let overlayId: string;
let client: TestWsClient;

beforeAll(async () => {
  await Promise.all([receiver.listen(), streamerbot.listen()]);
  daemon = await startTestDaemon();
  // Streamer.bot's address comes from the settings, in force at once.
  const current = await (await api(daemon, 'GET', '/api/settings')).json();
  const saved = await api(daemon, 'PUT', '/api/settings', {
    ...current,
    streamerbot: { url: streamerbot.url },
  });
  expect(saved.status).toBe(200);
  overlayId = daemon.overlays.list()[0]!.id;
  client = await subscribe(daemon, overlayId);
});
afterAll(async () => {
  client?.close();
  await daemon?.stop();
  receiver.close();
  streamerbot.close();
});
beforeEach(() => {
  receiver.requests.length = 0;
  streamerbot.requests.length = 0;
  receiver.answer = (_req, res) => {
    res.writeHead(200);
    res.end('ok');
  };
});

const gift = (nickname: string) => ({
  type: 'gift',
  user: { uniqueId: nickname.toLowerCase(), nickname },
  data: { giftName: 'Rose', repeatCount: 5, diamondCount: 1 },
});

async function putRules(actions: unknown[]): Promise<Response> {
  return api(daemon, 'PUT', '/api/rules', [{ id: 'r', trigger: 'gift', actions }]);
}

async function log(): Promise<
  { ruleId: string; action: number; kind: string; ok: boolean; ms: number; error?: string }[]
> {
  return (await api(daemon, 'GET', '/api/actions/log')).json();
}

describe('webhook and Streamer.bot actions', () => {
  it('calls them with the event filled in, after the overlay command, and logs each outcome', async () => {
    expect(
      (
        await putRules([
          {
            overlayId,
            widgetId: 'alerts',
            command: 'show-alert',
            payload: { text: '{user.nickname}', duration: 1000 },
          },
          {
            kind: 'webhook',
            url: `${receiver.url}/hook?from={user.uniqueId}`,
            body: { who: '{user.nickname}', n: '{data.repeatCount}' },
          },
          { kind: 'streamerbot', action: 'Gift camera', args: { user: '{user.nickname}' } },
        ])
      ).status,
    ).toBe(200);
    const posted = await api(daemon, 'POST', '/api/events', gift('Alice'));
    expect(await posted.json()).toEqual({ accepted: true, firedRules: ['r'] });
    // The overlay has the event and the command at once; the calls follow in the rule's order.
    await client.next((m) => m.type === 'stream-event');
    expect(await client.next((m) => m.type === 'overlay-command')).toMatchObject({
      payload: { text: 'Alice' },
    });
    await waitFor(() => streamerbot.requests.length === 1, 5000, 'the Streamer.bot call');
    expect(receiver.requests).toHaveLength(1);
    const hook = receiver.requests[0]!;
    expect(hook).toMatchObject({ method: 'POST', url: '/hook?from=alice' });
    expect(hook.headers['content-type']).toBe('application/json');
    expect(JSON.parse(hook.body)).toEqual({ who: 'Alice', n: '5' });
    expect(streamerbot.requests[0]).toMatchObject({ method: 'POST', url: '/DoAction' });
    expect(JSON.parse(streamerbot.requests[0]!.body)).toEqual({
      action: { name: 'Gift camera' },
      args: { user: 'Alice' },
    });
    const entries = (await log()).slice(-3);
    expect(entries.map((e) => [e.action, e.kind, e.ok])).toEqual([
      [0, 'overlay', true],
      [1, 'webhook', true],
      [2, 'streamerbot', true],
    ]);
  });

  it('logs a refused call with its status and does not follow a redirect', async () => {
    receiver.answer = (req, res) => {
      if (req.url === '/moved') {
        res.writeHead(302, { Location: `${receiver.url}/elsewhere` });
        res.end();
      } else {
        res.writeHead(500);
        res.end('no');
      }
    };
    await putRules([
      { kind: 'webhook', url: `${receiver.url}/moved`, method: 'GET' },
      { kind: 'webhook', url: `${receiver.url}/broken` },
    ]);
    const before = (await log()).length;
    await api(daemon, 'POST', '/api/events', gift('Bob'));
    await waitFor(() => receiver.requests.length === 2, 5000, 'both calls');
    await until(async () => ((await log()).length >= before + 2 ? true : undefined), 'the log entries', 5000);
    const [moved, broken] = (await log()).slice(before);
    expect(moved).toMatchObject({
      kind: 'webhook',
      ok: false,
      error: 'HTTP 302 (redirects are not followed)',
    });
    expect(broken).toMatchObject({ kind: 'webhook', ok: false, error: 'HTTP 500' });
    expect(receiver.requests.map((r) => r.url)).toEqual(['/moved', '/broken']);
  });

  it('never holds up events: a receiver that never answers is given up after 5 s, logged', async () => {
    receiver.answer = () => {}; // never answers
    await putRules([
      { kind: 'webhook', url: `${receiver.url}/silent` },
      {
        overlayId,
        widgetId: 'alerts',
        command: 'show-alert',
        payload: { text: 'after the hook', duration: 500 },
      },
    ]);
    const before = (await log()).length;
    const started = Date.now();
    await api(daemon, 'POST', '/api/events', gift('Carol'));
    await client.next((m) => m.type === 'stream-event' && JSON.stringify(m).includes('Carol'));
    expect(Date.now() - started).toBeLessThan(1000);
    await until(
      async () => ((await log()).length >= before + 2 ? true : undefined),
      'the rest of the rule',
      8000,
    );
    const [silent, after] = (await log()).slice(before);
    expect(silent).toMatchObject({ kind: 'webhook', ok: false, error: 'no answer within 5 s' });
    expect(silent!.ms).toBeGreaterThanOrEqual(4900);
    expect(after).toMatchObject({ kind: 'overlay', ok: true });
  }, 15_000);

  it('holds at most 32 unanswered requests to one address: a flood fails the rest at once, logged', async () => {
    receiver.answer = () => {}; // never answers
    await putRules([{ kind: 'webhook', url: `${receiver.url}/flood` }]);
    const before = (await log()).length;
    for (let i = 0; i < 40; i++) await api(daemon, 'POST', '/api/events', gift(`F${i}`));
    const dropped = await until(async () => {
      const entries = (await log()).slice(before);
      return entries.length >= 8 ? entries : undefined;
    }, 'the dropped calls');
    expect(
      dropped.every((e) => e.error === `dropped: 32 requests to ${receiver.url} are still unanswered`),
    ).toBe(true);
    // The 32 under way reach the receiver; the rest were refused at once (above), so no more come.
    await waitFor(
      () => receiver.requests.filter((r) => r.url === '/flood').length >= 32,
      3000,
      'the 32 calls',
    );
    expect(receiver.requests.filter((r) => r.url === '/flood')).toHaveLength(32);
    // They end at their timeout; the next events are called again.
    await until(async () => ((await log()).length >= before + 40 ? true : undefined), 'the timeouts', 8000);
    receiver.answer = (_req, res) => res.end('ok');
    await api(daemon, 'POST', '/api/events', gift('After'));
    await until(async () => ((await log()).at(-1)?.ok ? true : undefined), 'a call that went through', 3000);
  }, 15_000);
});

describe('delays and queues', () => {
  it('waits delayMs, runs a named queue one at a time in arrival order, and lets it be skipped and cleared', async () => {
    const holding: ServerResponse[] = [];
    receiver.answer = (_req, res) => holding.push(res);
    await putRules([
      { kind: 'webhook', url: `${receiver.url}/q?n={user.nickname}`, queue: 'camera', delayMs: 100 },
    ]);
    for (const name of ['One', 'Two', 'Three']) await api(daemon, 'POST', '/api/events', gift(name));
    await waitFor(() => receiver.requests.length === 1, 3000, 'the first call');
    // One at a time: once the others' delays are over, the queue holds them behind the first.
    const queues = async () => (await api(daemon, 'GET', '/api/actions/queues')).json();
    await until(
      async () => ((await queues()) as { waiting: number }[])[0]?.waiting === 2 || undefined,
      'the two others waiting',
      3000,
    );
    expect(receiver.requests.map((r) => r.url)).toEqual(['/q?n=One']);
    expect(await queues()).toEqual([{ name: 'camera', running: true, waiting: 2 }]);
    const skipped = await api(daemon, 'POST', '/api/actions/queues/camera/skip');
    expect(await skipped.json()).toEqual({ name: 'camera', running: true, waiting: 1 });
    await waitFor(() => receiver.requests.length === 2, 3000, 'the second call');
    expect(receiver.requests[1]!.url).toBe('/q?n=Two');
    const cleared = await api(daemon, 'POST', '/api/actions/queues/camera/clear');
    expect(await cleared.json()).toEqual({ name: 'camera', running: true, waiting: 0 });
    for (const res of holding.splice(0)) res.end();
    // The queue empties once the running call ended; a third call would have kept it running.
    await until(
      async () => ((await queues()) as unknown[]).length === 0 || undefined,
      'the queue done',
      3000,
    );
    expect(receiver.requests).toHaveLength(2);
    expect((await api(daemon, 'POST', '/api/actions/queues/nope/skip')).status).toBe(404);
  });
});

describe('settings', () => {
  it('keep the OBS password secret: stored 0600, answered only as {set}, kept, replaced or cleared', async () => {
    const file = join(daemon.dataDir.root, 'settings.json');
    const get = async () => (await api(daemon, 'GET', '/api/settings')).json() as Promise<SettingsView>;
    const initial = await get();
    expect(initial.obs).toEqual({ url: 'ws://127.0.0.1:4455', password: { set: false } });
    expect(initial.tts).toEqual({ enabled: true, maxChars: 200, blockedWords: [], userCooldownMs: 0 });

    const put = (body: unknown) => api(daemon, 'PUT', '/api/settings', body);
    expect(
      (await put({ ...initial, obs: { url: 'ws://127.0.0.1:4460', password: 's3cret-pass' } })).status,
    ).toBe(200);
    const afterSet = await get();
    expect(afterSet.obs).toEqual({ url: 'ws://127.0.0.1:4460', password: { set: true } });
    expect(JSON.stringify(afterSet)).not.toContain('s3cret-pass');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8')).obs.password).toBe('s3cret-pass');

    // Sent back as GET answered it, the secret stays.
    expect((await put(afterSet)).status).toBe(200);
    expect(JSON.parse(await readFile(file, 'utf8')).obs.password).toBe('s3cret-pass');
    // null clears it.
    expect((await put({ ...afterSet, obs: { ...afterSet.obs, password: null } })).status).toBe(200);
    expect((await get()).obs.password).toEqual({ set: false });
    expect(JSON.parse(await readFile(file, 'utf8')).obs).not.toHaveProperty('password');
  });

  it.each([
    [{ obs: { url: 'http://127.0.0.1:4455' } }, 'obs.url'],
    [{ streamerbot: { url: 'ftp://x' } }, 'streamerbot.url'],
    [{ tts: { maxChars: 0 } }, 'tts.maxChars'],
    [{ tts: { blockedWords: [''] } }, 'tts.blockedWords.0'],
  ])('refuses %j with 400 naming %s and changes nothing', async (patch, field) => {
    const before = await (await api(daemon, 'GET', '/api/settings')).json();
    const res = await api(daemon, 'PUT', '/api/settings', { ...(before as object), ...patch });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.message.startsWith(`${field}:`)).toBe(true);
    expect(await (await api(daemon, 'GET', '/api/settings')).json()).toEqual(before);
  });
});

describe('bad actions', () => {
  it.each([
    [{ kind: 'webhook', url: 'ftp://example.test/x' }, '0.actions.0.url'],
    [{ kind: 'webhook', url: 'http://127.0.0.1/x', method: 'DELETE' }, '0.actions.0.method'],
    [{ kind: 'streamerbot' }, '0.actions.0.action'],
    [{ kind: 'teleport' }, '0.actions.0.kind'],
    [{ kind: 'webhook', url: 'http://127.0.0.1/x', delayMs: 60_001 }, '0.actions.0.delayMs'],
    [{ kind: 'webhook', url: 'http://127.0.0.1/x', queue: 'no spaces' }, '0.actions.0.queue'],
  ])('refuses %j with 400 naming %s, and keeps the rules', async (action, field) => {
    await putRules([{ kind: 'webhook', url: `${receiver.url}/kept` }]);
    const before = await (await api(daemon, 'GET', '/api/rules')).json();
    const res = await putRules([action]);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('bad_request');
    expect(body.error.message.startsWith(`${field}:`)).toBe(true);
    expect(await (await api(daemon, 'GET', '/api/rules')).json()).toEqual(before);
  });
});

describe('test this rule', () => {
  it('runs the actions of an unsaved rule once, for an event meeting its conditions, and answers with each outcome', async () => {
    await putRules([{ kind: 'webhook', url: `${receiver.url}/saved` }]);
    const before = await (await api(daemon, 'GET', '/api/rules')).json();
    const res = await api(daemon, 'POST', '/api/rules/test', {
      rule: {
        id: 'draft',
        trigger: 'chat',
        conditions: { command: '!dance' },
        cooldownMs: 60_000,
        actions: [
          {
            kind: 'webhook',
            url: `${receiver.url}/try`,
            body: { said: '{data.comment}', who: '{user.nickname}' },
          },
          { kind: 'webhook', url: 'http://127.0.0.1:1/nothing-listens' },
        ],
      },
    });
    expect(res.status).toBe(200);
    const result = (await res.json()) as {
      event: { type: string; data: { comment: string } };
      outcomes: { action: number; ok: boolean; error?: string }[];
      unfinished: number;
    };
    expect(result.event).toMatchObject({ type: 'chat', data: { comment: '!dance' } });
    expect(result.unfinished).toBe(0);
    const byAction = [...result.outcomes].sort((a, b) => a.action - b.action);
    expect(byAction[0]).toMatchObject({ action: 0, ok: true });
    expect(byAction[1]).toMatchObject({ action: 1, ok: false });
    expect(byAction[1]!.error).toContain('cannot reach http://127.0.0.1:1/');
    expect(JSON.parse(receiver.requests.at(-1)!.body)).toEqual({ said: '!dance', who: 'Test viewer' });
    // Nothing was saved, and the saved rules did not run.
    expect(await (await api(daemon, 'GET', '/api/rules')).json()).toEqual(before);
    expect(receiver.requests.map((r) => r.url)).toEqual(['/try']);
  });

  it('refuses a rule the rules would refuse, naming the field', async () => {
    const res = await api(daemon, 'POST', '/api/rules/test', {
      rule: { id: 'x', trigger: 'gift', actions: [{ kind: 'webhook', url: 'ftp://nope' }] },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /^rule\.actions\.0\.url:/,
    );
  });
});

const chat = (comment: string, nickname = 'Viewer') => ({
  type: 'chat',
  user: { uniqueId: 'viewer', nickname },
  data: { comment },
});

describe('a chat line never ends the daemon', () => {
  it('the original crash: a placeholder in a webhook host is refused at save (400 naming the field), in "test this rule" too, and a chat line with a space still leaves the daemon serving', async () => {
    const rule = {
      id: 'rule-host',
      name: 'Host hook',
      trigger: 'chat',
      actions: [{ kind: 'webhook', url: 'http://{data.comment}.example/x' }],
    };
    const saved = await api(daemon, 'PUT', '/api/rules', [rule]);
    expect(saved.status).toBe(400);
    expect(((await saved.json()) as { error: { message: string } }).error.message).toMatch(
      /^0\.actions\.0\.url: .*scheme, user info, host or port/,
    );
    const tried = await api(daemon, 'POST', '/api/rules/test', { rule });
    expect(tried.status).toBe(400);
    expect(((await tried.json()) as { error: { message: string } }).error.message).toMatch(
      /^rule\.actions\.0\.url:/,
    );
    const posted = await api(daemon, 'POST', '/api/events', chat('hello there, streamer'));
    expect(posted.status).toBe(202);
    expect((await api(daemon, 'GET', '/status')).status).toBe(200);
  });

  it('the crash class: a rendered webhook URL that does not parse fails its action in the log, named by the rule, and the daemon serves', async () => {
    // What the rule of the original crash rendered for "hi there": the URL no longer parses.
    const before = (await log()).length;
    daemon.actions.run([
      {
        ruleId: 'rule-qly30d',
        ruleName: 'Host hook',
        index: 0,
        kind: 'webhook',
        url: 'http://hi there.example/x',
        origin: 'http://{data.comment}.example',
        method: 'POST',
        headers: {},
        body: undefined,
      },
    ]);
    const [entry] = await until(async () => {
      const entries = (await log()).slice(before);
      return entries.length > 0 ? entries : undefined;
    }, 'the failed action');
    expect(entry).toMatchObject({ ruleId: 'rule-qly30d', kind: 'webhook', ok: false });
    expect((entry as { ruleName?: string }).ruleName).toBe('Host hook');
    expect(entry!.error).toContain('not a valid URL');
    expect(
      daemon.logs.some((l) => l.startsWith('[actions] rule "Host hook" action 1 (webhook) failed')),
    ).toBe(true);
    expect(daemon.logs.join('\n')).not.toContain('rule-qly30d');
    expect((await api(daemon, 'GET', '/status')).status).toBe(200);
  });

  it('every action kind that throws is caught by its own chain and logged with the rule and kind; the daemon serves', async () => {
    const kinds = ['overlay', 'speak', 'obs', 'webhook', 'streamerbot', 'chat'] as const;
    const throwing = (kind: (typeof kinds)[number], index: number, queued: boolean) => {
      const action = {
        ruleId: `rule-${kind}`,
        ruleName: `Throwing ${kind}`,
        index,
        kind,
        // A field every kind reads only when it runs.
        ...(queued ? { queue: `q-${kind}` } : { delayMs: 1 }),
      };
      for (const field of ['overlayId', 'text', 'params', 'url', 'action', 'origin', 'platform'])
        Object.defineProperty(action, field, {
          enumerable: true,
          get() {
            throw new Error(`${kind} exploded`);
          },
        });
      return action as unknown as Parameters<TestDaemon['actions']['run']>[0][number];
    };
    const before = (await log()).length;
    const lines = daemon.logs.length;
    daemon.actions.run(kinds.flatMap((kind, i) => [throwing(kind, i, false), throwing(kind, i, true)]));
    // A chain that fails before any action runs (its wait cannot be read) is caught too.
    const broken = throwing('overlay', 9, false);
    Object.defineProperty(broken, 'delayMs', {
      get() {
        throw new Error('the wait exploded');
      },
    });
    Object.defineProperty(broken, 'ruleName', { value: 'Broken chain' });
    daemon.actions.run([broken]);
    const entries = await until(async () => {
      const list = (await log()).slice(before);
      return list.length >= kinds.length * 2 ? list : undefined;
    }, 'an outcome for every action');
    for (const kind of kinds) {
      const mine = entries.filter((e) => e.kind === kind && e.ruleId === `rule-${kind}`);
      expect(mine.map((e) => e.ok)).toEqual([false, false]);
      expect(
        daemon.logs.slice(lines).some((l) => l.startsWith(`[actions] rule "Throwing ${kind}" action`)),
      ).toBe(true);
    }
    await until(
      async () => (daemon.logs.slice(lines).some((l) => l.includes('"Broken chain"')) ? true : undefined),
      'the broken chain named',
    );
    // Nothing reached the last resort: each chain caught its own.
    expect(daemon.logs.some((l) => l.includes('nothing handled'))).toBe(false);
    expect((await api(daemon, 'GET', '/status')).status).toBe(200);
    expect((await api(daemon, 'POST', '/api/events', chat('still here'))).status).toBe(202);
  });
});

describe('viewer text in webhook URLs', () => {
  it('is percent-encoded for the part it lands in: a nickname adds no query parameter, a comment walks no path', async () => {
    await putRules([]);
    const saved = await api(daemon, 'PUT', '/api/rules', [
      {
        id: 'r',
        trigger: 'chat',
        actions: [
          { kind: 'webhook', url: `${receiver.url}/said/{data.comment}?from={user.nickname}#{data.comment}` },
          { kind: 'webhook', url: `${receiver.url}/json`, body: '{"said": "{data.comment}"}' },
        ],
      },
    ]);
    expect(saved.status).toBe(200);
    await api(daemon, 'POST', '/api/events', chat('../../admin?x=1 hi', 'Eve&admin=1'));
    await waitFor(() => receiver.requests.length === 2, 5000, 'both calls');
    const [said, json] = receiver.requests;
    expect(said!.url).toBe(`/said/${encodeURIComponent('../../admin?x=1 hi')}?from=Eve%26admin%3D1`);
    expect(new URL(said!.url, receiver.url).searchParams.get('from')).toBe('Eve&admin=1');
    expect(JSON.parse(json!.body)).toEqual({ said: '../../admin?x=1 hi' });
  });

  it("a rendered URL that left the rule's origin is refused and logged", async () => {
    const before = (await log()).length;
    daemon.actions.run([
      {
        ruleId: 'r',
        ruleName: 'Moved hook',
        index: 0,
        kind: 'webhook',
        url: 'http://127.0.0.2:9/elsewhere',
        origin: receiver.url,
        method: 'POST',
        headers: {},
        body: undefined,
      },
    ]);
    const [entry] = await until(async () => {
      const entries = (await log()).slice(before);
      return entries.length > 0 ? entries : undefined;
    }, 'the refused action');
    expect(entry).toMatchObject({ ok: false, kind: 'webhook' });
    expect(entry!.error).toBe(
      `refused: the URL with the event filled in goes to http://127.0.0.2:9, not ${receiver.url}`,
    );
    expect(receiver.requests).toHaveLength(0);
  });
});
