import { describe, expect, it } from 'vitest';
import { parseWith, type StreamEvent } from '../../../shared/protocol/index.js';
import { RuleList } from '../../../shared/rules.js';
import { RuleEngine } from './engine.js';

const OVERLAY = '6f1c7c7e-3b5e-4c1a-9d8e-2f4b5a6c7d8e';

function rules(input: unknown[]) {
  const parsed = parseWith(RuleList, input);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

const action = (payload: Record<string, unknown> = {}) => ({
  overlayId: OVERLAY,
  widgetId: 'alerts',
  command: 'show-alert',
  payload,
});

const gift = (
  giftName: string,
  repeatCount: number,
  diamondCount?: number,
  uniqueId = 'rosa',
): StreamEvent => ({
  type: 'gift',
  platform: 'api',
  user: { uniqueId, nickname: uniqueId.toUpperCase() },
  data: { giftName, repeatCount, ...(diamondCount === undefined ? {} : { diamondCount }) },
});
const chat = (comment: string): StreamEvent => ({
  type: 'chat',
  platform: 'api',
  user: { uniqueId: 'c', nickname: 'C' },
  data: { comment },
});
const like = (likeCount: number): StreamEvent => ({
  type: 'like',
  platform: 'api',
  user: { uniqueId: 'l', nickname: 'L' },
  data: { likeCount },
});
const follow: StreamEvent = {
  type: 'follow',
  platform: 'api',
  user: { uniqueId: 'f', nickname: 'F' },
  data: {},
};

function fired(engine: RuleEngine, event: StreamEvent) {
  return engine.evaluate(event).actions.map((a) => a.ruleId);
}

describe('RuleEngine conditions', () => {
  it('matches on the trigger type, in rule order', () => {
    const engine = new RuleEngine(
      rules([
        { id: 'follows', trigger: 'follow', actions: [action()] },
        { id: 'gifts', trigger: 'gift', actions: [action()] },
        { id: 'gifts-too', trigger: 'gift', actions: [action()] },
      ]),
    );
    expect(fired(engine, follow)).toEqual(['follows']);
    expect(fired(engine, gift('Rose', 1))).toEqual(['gifts', 'gifts-too']);
    expect(fired(engine, chat('hi'))).toEqual([]);
  });

  it('compares gift names case-insensitively and counts repeats and diamonds', () => {
    const engine = new RuleEngine(
      rules([
        { id: 'rose', trigger: 'gift', conditions: { giftName: 'rose' }, actions: [action()] },
        { id: 'ten', trigger: 'gift', conditions: { minRepeatCount: 10 }, actions: [action()] },
        { id: 'rich', trigger: 'gift', conditions: { minDiamonds: 100 }, actions: [action()] },
      ]),
    );
    expect(fired(engine, gift('ROSE', 1, 1))).toEqual(['rose']);
    expect(fired(engine, gift('Rosebud', 10, 1))).toEqual(['ten']);
    // 20 × 5 diamonds = 100.
    expect(fired(engine, gift('Heart', 20, 5))).toEqual(['ten', 'rich']);
    expect(fired(engine, gift('Heart', 99))).toEqual(['ten']);
  });

  it('checks likes, chat text and the sender', () => {
    const engine = new RuleEngine(
      rules([
        { id: 'likes', trigger: 'like', conditions: { minLikes: 50 }, actions: [action()] },
        { id: 'dance', trigger: 'chat', conditions: { chatIncludes: '!Dance' }, actions: [action()] },
        { id: 'vip', trigger: 'gift', conditions: { userId: '@VIP' }, actions: [action()] },
      ]),
    );
    expect(fired(engine, like(49))).toEqual([]);
    expect(fired(engine, like(50))).toEqual(['likes']);
    expect(fired(engine, chat('please !DANCE now'))).toEqual(['dance']);
    expect(fired(engine, chat('dance'))).toEqual([]);
    expect(fired(engine, gift('Rose', 1, 1, 'vip'))).toEqual(['vip']);
    expect(fired(engine, gift('Rose', 1, 1, 'vipp'))).toEqual([]);
  });

  it('matches the platform an event came from', () => {
    const engine = new RuleEngine(
      rules([
        { id: 'tiktok-only', trigger: 'chat', conditions: { platform: 'tiktok' }, actions: [action()] },
        { id: 'any', trigger: 'chat', actions: [action()] },
      ]),
    );
    expect(fired(engine, { ...chat('hi'), platform: 'tiktok' })).toEqual(['tiktok-only', 'any']);
    expect(fired(engine, { ...chat('hi'), platform: 'twitch' })).toEqual(['any']);
    expect(fired(engine, chat('hi'))).toEqual(['any']);
    expect(() =>
      rules([{ id: 'x', trigger: 'chat', conditions: { platform: 'myspace' }, actions: [action()] }]),
    ).toThrow(/conditions\.platform/);
  });

  it('skips disabled rules', () => {
    const engine = new RuleEngine(
      rules([{ id: 'off', enabled: false, trigger: 'follow', actions: [action()] }]),
    );
    expect(fired(engine, follow)).toEqual([]);
  });

  it('does not match a gift-only condition on other event types', () => {
    const engine = new RuleEngine(
      rules([{ id: 'odd', trigger: 'follow', conditions: { giftName: 'Rose' }, actions: [action()] }]),
    );
    expect(fired(engine, follow)).toEqual([]);
  });
});

describe('RuleEngine cooldowns', () => {
  it('fires a rule at most once per cooldown, per rule', () => {
    let now = 0;
    const engine = new RuleEngine(
      rules([
        { id: 'slow', trigger: 'follow', cooldownMs: 10_000, actions: [action()] },
        { id: 'free', trigger: 'follow', actions: [action()] },
      ]),
      { now: () => now },
    );
    expect(fired(engine, follow)).toEqual(['slow', 'free']);
    now = 9_999;
    expect(fired(engine, follow)).toEqual(['free']);
    now = 10_000;
    expect(fired(engine, follow)).toEqual(['slow', 'free']);
  });

  it('does not start a cooldown when the conditions failed, and keeps it across reloads', () => {
    let now = 0;
    const list = rules([
      {
        id: 'big',
        trigger: 'gift',
        cooldownMs: 5000,
        conditions: { minRepeatCount: 5 },
        actions: [action()],
      },
    ]);
    const engine = new RuleEngine(list, { now: () => now });
    expect(fired(engine, gift('Rose', 1))).toEqual([]);
    expect(fired(engine, gift('Rose', 5))).toEqual(['big']);
    engine.load(list);
    now = 1000;
    expect(fired(engine, gift('Rose', 5))).toEqual([]);
  });
});

describe('RuleEngine actions', () => {
  it('produces templated overlay commands', () => {
    const engine = new RuleEngine(
      rules([
        {
          id: 'thanks',
          trigger: 'gift',
          actions: [
            action({ text: '{user.nickname} sent {data.repeatCount} × {data.giftName}', duration: 4000 }),
            {
              overlayId: OVERLAY,
              widgetId: 'title',
              command: 'set-text',
              payload: { text: 'Last: {user.nickname}{data.none}' },
            },
          ],
        },
      ]),
    );
    expect(engine.evaluate(gift('Rose', 99)).actions).toEqual([
      {
        ruleId: 'thanks',
        ruleName: 'thanks',
        index: 0,
        kind: 'overlay',
        overlayId: OVERLAY,
        widgetId: 'alerts',
        command: 'show-alert',
        payload: { text: 'ROSA sent 99 × Rose', duration: 4000 },
      },
      {
        ruleId: 'thanks',
        ruleName: 'thanks',
        index: 1,
        kind: 'overlay',
        overlayId: OVERLAY,
        widgetId: 'title',
        command: 'set-text',
        payload: { text: 'Last: ROSA' },
      },
    ]);
  });

  it('skips and reports a rule that fails, and still runs the others', () => {
    const engine = new RuleEngine(
      rules([
        { id: 'bad', trigger: 'chat', actions: [action({ text: '{data.comment}' })] },
        { id: 'good', trigger: 'chat', actions: [action({ text: 'ok' })] },
      ]),
    );
    const hostile = {
      type: 'chat',
      platform: 'api',
      user: { uniqueId: 'x', nickname: 'x' },
      get data(): { comment: string } {
        throw new Error('exploded');
      },
    } satisfies StreamEvent;
    const result = engine.evaluate(hostile);
    expect(result.actions).toEqual([]);
    expect(result.errors).toEqual([
      { ruleId: 'bad', ruleName: 'bad', message: 'exploded' },
      { ruleId: 'good', ruleName: 'good', message: 'exploded' },
    ]);
    expect(
      engine.evaluate(chat('hi')).actions.map((a) => (a.kind === 'overlay' ? a.payload : undefined)),
    ).toEqual([{ text: 'hi' }, { text: 'ok' }]);
  });

  it('refuses a rendered payload over 64 KiB as JSON, counting escapes and multi-byte characters', () => {
    const engine = new RuleEngine(
      rules([{ id: 'echo', trigger: 'chat', actions: [action({ text: '{data.comment}' })] }]),
    );
    // 11,000 control characters are 11,000 characters but 66,000 bytes once escaped (\u0001 each).
    const escaped = engine.evaluate(chat('\u0001'.repeat(11_000)));
    expect(escaped.actions).toEqual([]);
    expect(escaped.errors[0]?.message).toMatch(/over the limit of 65536/);
    // 22,000 three-byte characters are 66,000 bytes; 21,000 of them (63,000) pass.
    expect(engine.evaluate(chat('€'.repeat(22_000))).errors).toHaveLength(1);
    const fits = engine.evaluate(chat('€'.repeat(21_000)));
    expect(fits.errors).toEqual([]);
    expect(fits.actions).toHaveLength(1);
  });

  it('evaluates 500 rules against a flood of events quickly', () => {
    const list = rules(
      Array.from({ length: 500 }, (_, i) => ({
        id: `r${i}`,
        trigger: i % 2 ? 'gift' : 'chat',
        conditions: i % 2 ? { giftName: `Gift ${i}` } : { chatIncludes: `word${i}` },
        actions: [action({ text: '{user.nickname}: {data.giftName}{data.comment}' })],
      })),
    );
    const engine = new RuleEngine(list);
    const started = performance.now();
    let total = 0;
    for (let i = 0; i < 10_000; i++)
      total += engine.evaluate(gift(`Gift ${(i % 250) * 2 + 1}`, 1)).actions.length;
    const elapsed = performance.now() - started;
    expect(total).toBe(10_000);
    // 10 000 events × 500 rules; a generous bound that still catches per-event recompilation.
    expect(elapsed).toBeLessThan(2000);
  });
});

describe('chat commands, like milestones, per-viewer cooldowns and per-gift runs', () => {
  it('fires a chat command on the first word only, whatever its case', () => {
    const engine = new RuleEngine(
      rules([{ id: 'dance', trigger: 'chat', conditions: { command: '!dance' }, actions: [action()] }]),
    );
    expect(fired(engine, chat('!Dance now please'))).toEqual(['dance']);
    expect(fired(engine, chat('  !DANCE'))).toEqual(['dance']);
    expect(fired(engine, chat('let us !dance'))).toEqual([]);
    expect(fired(engine, chat('!dancer'))).toEqual([]);
  });

  it('fires each time the room total crosses a multiple of everyLikes, from the total or the sum', () => {
    const engine = new RuleEngine(
      rules([{ id: 'ms', trigger: 'like', conditions: { everyLikes: 100 }, actions: [action()] }]),
    );
    // Without totalLikeCount: the sum of likeCount (60, 120, 180, 240).
    expect([60, 60, 60, 60].map((n) => fired(engine, like(n)).length)).toEqual([0, 1, 0, 1]);
    const withTotal = (likeCount: number, totalLikeCount: number): StreamEvent => ({
      type: 'like',
      platform: 'api',
      user: { uniqueId: 'l', nickname: 'L' },
      data: { likeCount, totalLikeCount },
    });
    expect(fired(engine, withTotal(20, 990))).toEqual([]);
    expect(fired(engine, withTotal(20, 1010))).toEqual(['ms']);
    // One event crossing two multiples fires once.
    expect(fired(engine, withTotal(300, 1310))).toEqual(['ms']);
  });

  it('keeps a per-viewer cooldown beside the rule cooldown', () => {
    let now = 0;
    const engine = new RuleEngine(
      rules([{ id: 'hi', trigger: 'gift', userCooldownMs: 1000, actions: [action()] }]),
      { now: () => now },
    );
    expect(fired(engine, gift('Rose', 1, 1, 'ann'))).toEqual(['hi']);
    expect(fired(engine, gift('Rose', 1, 1, 'ANN'))).toEqual([]);
    expect(fired(engine, gift('Rose', 1, 1, 'bob'))).toEqual(['hi']);
    now = 1000;
    expect(fired(engine, gift('Rose', 1, 1, 'ann'))).toEqual(['hi']);
  });

  it('runs the actions once per gift of a streak with perUnit, at most 100 times', () => {
    const engine = new RuleEngine(
      rules([
        {
          id: 'each',
          trigger: 'gift',
          perUnit: true,
          actions: [action({ n: '{data.repeatCount}' }), action()],
        },
      ]),
    );
    expect(engine.evaluate(gift('Rose', 3)).actions).toHaveLength(6);
    expect(engine.evaluate(gift('Rose', 500)).actions).toHaveLength(200);
    expect(fired(engine, gift('Rose', 1))).toEqual(['each', 'each']);
  });

  it('refuses a command of two words and a perUnit that is not a boolean', () => {
    expect(
      parseWith(RuleList, [
        { id: 'x', trigger: 'chat', conditions: { command: '!a b' }, actions: [action()] },
      ]),
    ).toMatchObject({
      ok: false,
      field: '0.conditions.command',
    });
    expect(
      parseWith(RuleList, [{ id: 'x', trigger: 'gift', perUnit: 'yes', actions: [action()] }]),
    ).toMatchObject({
      ok: false,
      field: '0.perUnit',
    });
  });
});

describe('webhook URLs and bodies with viewer text', () => {
  const hook = (url: string, body?: unknown) =>
    new RuleEngine(
      rules([
        {
          id: 'hook',
          name: 'Chat hook',
          trigger: 'chat',
          actions: [{ kind: 'webhook', url, ...(body === undefined ? {} : { body }) }],
        },
      ]),
    );
  const fired = (engine: RuleEngine, comment: string) => {
    const action = engine.evaluate(chat(comment)).actions[0];
    if (action?.kind !== 'webhook') throw new Error('no webhook fired');
    return action;
  };

  it('percent-encodes placeholder values as encodeURIComponent in the path, query and fragment', () => {
    const engine = hook('http://127.0.0.1:8080/say/{data.comment}?text={data.comment}&x=1#{data.comment}');
    const action = fired(engine, 'hi there&admin=1/../#?');
    const encoded = encodeURIComponent('hi there&admin=1/../#?');
    expect(action.url).toBe(`http://127.0.0.1:8080/say/${encoded}?text=${encoded}&x=1#${encoded}`);
    const url = new URL(action.url);
    // The viewer added no query parameter, no path segment and no fragment.
    expect([...url.searchParams.keys()]).toEqual(['text', 'x']);
    expect(url.searchParams.get('text')).toBe('hi there&admin=1/../#?');
    expect(url.pathname.split('/')).toHaveLength(3);
    expect(action.origin).toBe('http://127.0.0.1:8080');
    expect(action.ruleName).toBe('Chat hook');
  });

  it('refuses a dot segment in the path (reported, the rule skipped for that event)', () => {
    const engine = hook('http://127.0.0.1:8080/a/{data.comment}/b');
    const result = engine.evaluate(chat('..'));
    expect(result.actions).toEqual([]);
    expect(result.errors[0]?.message).toContain('would move up');
  });

  it('escapes placeholder values as JSON string content in a text body that reads as JSON', () => {
    const engine = hook('http://127.0.0.1:8080/x', '{"said": "{data.comment}"}');
    const action = fired(engine, 'a "quote" \\ and\na line", "admin": true, "x": "');
    expect(JSON.parse(String(action.body))).toEqual({
      said: 'a "quote" \\ and\na line", "admin": true, "x": "',
    });
    // A text body that is not JSON keeps the text as it came.
    expect(fired(hook('http://127.0.0.1:8080/x', 'said: {data.comment}'), 'a "b"').body).toBe('said: a "b"');
  });

  it.each([
    'http://{data.comment}.example/x',
    'http://{user.nickname}@127.0.0.1/x',
    'http://127.0.0.1:{data.comment}/x',
    'http{data.comment}://127.0.0.1/x',
    'http://127.0.0.1{data.comment}',
  ])('refuses a placeholder in the scheme, user info, host or port when saved: %s', (url) => {
    const parsed = parseWith(RuleList, [{ id: 'r', trigger: 'chat', actions: [{ kind: 'webhook', url }] }]);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.field).toBe('0.actions.0.url');
      expect(parsed.error).toContain('scheme, user info, host or port');
    }
  });

  it('accepts placeholders after the host, and literal braces anywhere', () => {
    for (const url of [
      'http://127.0.0.1/{data.comment}',
      'http://127.0.0.1?q={data.comment}',
      'http://127.0.0.1#{x}',
    ])
      expect(
        parseWith(RuleList, [{ id: 'r', trigger: 'chat', actions: [{ kind: 'webhook', url }] }]).ok,
      ).toBe(true);
  });
});
