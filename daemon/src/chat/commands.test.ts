import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import type { Platform, StreamEvent } from '../../../shared/protocol/index.js';
import { type CommandsSettings, DEFAULT_SETTINGS, StoredSettings } from '../../../shared/settings.js';
import { FakeTimers } from '../../../test/support/fake-timers.js';
import { ChatCommands, type CommandFigures, NO_TOP } from './commands.js';

const chat = (comment: string, uniqueId = 'ann', platform: Platform = 'twitch'): StreamEvent => ({
  type: 'chat',
  platform,
  user: { uniqueId, nickname: uniqueId.toUpperCase() },
  data: { comment },
});

/** The `commands` settings with `patch` applied, defaults for the rest, as settings.json would give them. */
function commands(patch: Record<string, unknown> = {}): CommandsSettings {
  return v.parse(StoredSettings, {
    commands: {
      points: { enabled: true, ...(patch.points as object) },
      top: { enabled: true, ...(patch.top as object) },
    },
  }).commands;
}

function setup(settings: CommandsSettings = commands()) {
  const clock = new FakeTimers();
  const points = new Map<string, number>([
    ['twitch:ann', 120],
    ['kick:ann', 7],
  ]);
  let top = [
    { nickname: 'Bob', points: 300 },
    { nickname: 'Ann', points: 120 },
    { nickname: 'Cy', points: 5 },
  ];
  const reads = { points: 0, top: 0 };
  const figures: CommandFigures = {
    points: (platform, uniqueId) => {
      reads.points++;
      return points.get(`${platform}:${uniqueId}`) ?? 0;
    },
    top: (limit) => {
      reads.top++;
      return top.slice(0, limit);
    },
  };
  let current = settings;
  const commandsOf = new ChatCommands({ settings: () => current, figures, now: () => clock.now() });
  const said = (event: StreamEvent) => {
    const action = commandsOf.answer(event);
    return action?.kind === 'chat' ? action.text : undefined;
  };
  return {
    clock,
    reads,
    said,
    answer: (event: StreamEvent) => commandsOf.answer(event),
    setSettings: (s: CommandsSettings) => {
      current = s;
    },
    setTop: (t: typeof top) => {
      top = t;
    },
  };
}

describe('the built-in chat commands', () => {
  it('are on by default, with the documented triggers, texts and cooldowns', () => {
    expect(DEFAULT_SETTINGS.commands).toEqual({
      points: {
        enabled: true,
        trigger: '!points',
        text: '{user.nickname} has {points} points',
        cooldownMs: 10_000,
        userCooldownMs: 30_000,
      },
      top: {
        enabled: true,
        trigger: '!top',
        text: 'Top: {top}',
        cooldownMs: 10_000,
        userCooldownMs: 30_000,
      },
    });
    const { said } = setup(DEFAULT_SETTINGS.commands);
    expect(said(chat('!points'))).toBeDefined();
    expect(said(chat('!top'))).toBeDefined();
  });

  it("answer !points with the viewer's points on the platform the message came from", () => {
    const { answer, said, clock } = setup();
    expect(answer(chat('!points'))).toEqual({
      ruleId: 'command:points',
      ruleName: 'chat command !points',
      index: 0,
      kind: 'chat',
      text: 'ANN has 120 points',
      platform: 'same',
      from: 'twitch',
    });
    clock.advance(60_000);
    expect(said(chat('!points', 'ann', 'kick'))).toBe('ANN has 7 points');
    clock.advance(60_000);
    expect(said(chat('!points', 'newcomer'))).toBe('NEWCOMER has 0 points');
  });

  it('answer !top with the first three of the session by points', () => {
    const { said, clock, setTop } = setup();
    expect(said(chat('!top'))).toBe('Top: Bob (300), Ann (120), Cy (5)');
    setTop([]);
    clock.advance(60_000);
    expect(said(chat('!top'))).toBe(`Top: ${NO_TOP}`);
  });

  it('match the first word in any case, and nothing else', () => {
    const { said, clock } = setup();
    expect(said(chat('  !POINTS please'))).toBe('ANN has 120 points');
    clock.advance(60_000);
    expect(said(chat('what are !points'))).toBeUndefined();
    expect(said(chat('!pointsplease'))).toBeUndefined();
    expect(
      said({
        type: 'like',
        platform: 'twitch',
        user: { uniqueId: 'ann', nickname: 'Ann' },
        data: { likeCount: 1 },
      }),
    ).toBeUndefined();
  });

  it('render the rule placeholders too, and read only the figures the text uses', () => {
    const { said, reads, clock } = setup(
      commands({ points: { text: '{summary} / {type} / {user.uniqueId} / {data.comment}' } }),
    );
    expect(said(chat('!points now'))).toBe('ANN: !points now / chat / ann / !points now');
    expect(reads).toEqual({ points: 0, top: 0 });
    clock.advance(60_000);
    expect(said(chat('!top'))).toBe('Top: Bob (300), Ann (120), Cy (5)');
    expect(reads).toEqual({ points: 0, top: 1 });
  });

  it('wait cooldownMs between two answers of a command, whoever asks', () => {
    const { said, clock } = setup();
    expect(said(chat('!points', 'ann'))).toBeDefined();
    clock.advance(9_999);
    expect(said(chat('!points', 'bob'))).toBeUndefined();
    // The other command has its own cooldown.
    expect(said(chat('!top', 'bob'))).toBeDefined();
    clock.advance(1);
    expect(said(chat('!points', 'bob'))).toBe('BOB has 0 points');
  });

  it('wait userCooldownMs between two answers to one viewer on one platform', () => {
    const { said, clock } = setup();
    expect(said(chat('!points', 'ann'))).toBeDefined();
    clock.advance(10_000);
    expect(said(chat('!Points', 'ANN'))).toBeUndefined();
    // The same name on another platform is another viewer.
    expect(said(chat('!points', 'ann', 'kick'))).toBe('ANN has 7 points');
    clock.advance(20_000);
    expect(said(chat('!points', 'ann'))).toBe('ANN has 120 points');
  });

  it('start no cooldown for a message left unanswered', () => {
    const { said, clock } = setup();
    expect(said(chat('!points', 'ann'))).toBeDefined();
    clock.advance(5_000);
    // Held back by the command's cooldown: Bob's own cooldown does not start.
    expect(said(chat('!points', 'bob'))).toBeUndefined();
    clock.advance(5_000);
    expect(said(chat('!points', 'bob'))).toBeDefined();
  });

  it('follow the settings as they change: trigger, text, enabled, no cooldowns', () => {
    const { said, setSettings } = setup();
    setSettings(
      commands({
        points: { trigger: '!score', text: '{user.nickname}: {points}', cooldownMs: 0, userCooldownMs: 0 },
        top: { enabled: false },
      }),
    );
    expect(said(chat('!points'))).toBeUndefined();
    expect(said(chat('!score'))).toBe('ANN: 120');
    expect(said(chat('!score'))).toBe('ANN: 120');
    expect(said(chat('!top'))).toBeUndefined();
  });
});

describe('the commands settings', () => {
  const issues = (input: unknown) =>
    (v.safeParse(StoredSettings, { commands: input }).issues ?? []).map((i) => [v.getDotPath(i), i.message]);

  it('refuse an empty trigger, one with spaces, an empty text, and cooldowns outside 0 ms to a day', () => {
    expect(issues({ points: { trigger: ' ' } })).toEqual([['commands.points.trigger', 'must not be empty']]);
    expect(issues({ points: { trigger: '!my points' } })).toEqual([
      ['commands.points.trigger', 'must be one word, without spaces'],
    ]);
    expect(issues({ top: { text: '  ' } })).toEqual([['commands.top.text', 'must not be empty']]);
    expect(issues({ top: { text: 'x'.repeat(501) } })).toEqual([
      ['commands.top.text', 'must be at most 500 characters'],
    ]);
    expect(issues({ points: { cooldownMs: -1 } })).toEqual([
      ['commands.points.cooldownMs', 'must be 0 or more'],
    ]);
    expect(issues({ points: { userCooldownMs: 86_400_001 } })).toEqual([
      ['commands.points.userCooldownMs', 'must be at most a day'],
    ]);
    expect(issues({ points: { cooldownMs: 1.5 } })).toEqual([
      ['commands.points.cooldownMs', 'must be a whole number of milliseconds'],
    ]);
  });

  it('refuse the same trigger for both commands, in any case', () => {
    expect(issues({ points: { trigger: '!Go' }, top: { trigger: '!go' } })).toEqual([
      ['commands.top.trigger', "must differ from the points command's trigger"],
    ]);
  });

  it('trim the trigger', () => {
    expect(v.parse(StoredSettings, { commands: { top: { trigger: ' !best ' } } }).commands.top.trigger).toBe(
      '!best',
    );
  });
});
