import { describe, expect, it } from 'vitest';
import {
  CHAT_PLATFORMS,
  chatLimitsText,
  chatPlatformsText,
  MONEY_PROVIDERS,
  PLATFORM_NAMES,
  PLATFORM_TABLE,
  type PlatformFacts,
  platformFacts,
  SOURCE_PLATFORMS,
} from './platforms.js';
import { PLATFORMS } from './protocol/index.js';
import { CHAT_TARGETS } from './rules.js';

const table: Record<string, PlatformFacts> = PLATFORM_TABLE;

describe('the platform table', () => {
  it('holds every live platform, every money provider and api, and nothing else', () => {
    expect(Object.keys(table).sort()).toEqual([...SOURCE_PLATFORMS, ...MONEY_PROVIDERS, 'api'].sort());
    expect(MONEY_PROVIDERS).toEqual([
      'throne',
      'kofi',
      'fourthwall',
      'bmac',
      'patreon',
      'streamelements',
      'streamlabs',
    ]);
    // The event schema's platforms and a chat action's targets are the table's.
    expect(PLATFORMS).toEqual(['tiktok', 'twitch', 'youtube', 'kick', 'api']);
    expect(CHAT_TARGETS).toEqual(['same', 'twitch', 'kick', 'youtube', 'all']);
  });

  it.each([...SOURCE_PLATFORMS, ...MONEY_PROVIDERS])(
    '%s has a name, a service, a mark, a unit and its chat',
    (id) => {
      const facts = table[id];
      expect(facts?.name).toMatch(/\S/);
      expect(facts?.service).toMatch(/\S/);
      expect(facts?.mark).toMatch(/\S/);
      expect(facts?.unit.code).toMatch(/^(diamonds|bits|kicks|currency)$/);
      if (facts?.unit.code !== 'currency') {
        expect(facts?.unit.one).toMatch(/\S/);
        expect(facts?.unit.many).toMatch(/\S/);
      }
      expect(facts).toHaveProperty('chat');
      const chat = facts?.chat;
      if ((CHAT_PLATFORMS as readonly string[]).includes(id)) {
        expect(chat?.maxLength).toBeGreaterThan(0);
        expect(chat?.send.count).toBeGreaterThan(0);
        expect(chat?.send.perMs).toBeGreaterThan(0);
      } else expect(chat).toBeNull();
    },
  );

  it('names each platform as a streamer knows it, with the units and chat limits the platforms have', () => {
    expect(PLATFORM_NAMES).toEqual({
      tiktok: 'TikTok',
      twitch: 'Twitch',
      youtube: 'YouTube',
      kick: 'Kick',
      api: 'API',
      throne: 'Throne',
      kofi: 'Ko-fi',
      fourthwall: 'Fourthwall',
      bmac: 'Buy Me a Coffee',
      patreon: 'Patreon',
      streamelements: 'StreamElements',
      streamlabs: 'Streamlabs',
    });
    expect(PLATFORM_TABLE.tiktok.service).toBe('TikTok LIVE');
    expect(PLATFORM_TABLE.tiktok.unit.many).toBe('diamonds');
    expect(PLATFORM_TABLE.twitch.unit.many).toBe('bits');
    expect(PLATFORM_TABLE.kick.unit.many).toBe('Kicks');
    expect(PLATFORM_TABLE.youtube.unit.code).toBe('currency');
    for (const p of MONEY_PROVIDERS) expect(PLATFORM_TABLE[p].unit.code).toBe('currency');
    // decisions-3 §12.
    expect(PLATFORM_TABLE.twitch.chat).toEqual({ maxLength: 500, send: { count: 20, perMs: 30_000 } });
    expect(PLATFORM_TABLE.kick.chat).toEqual({ maxLength: 500, send: { count: 20, perMs: 30_000 } });
    expect(PLATFORM_TABLE.youtube.chat).toEqual({ maxLength: 200, send: { count: 1, perMs: 2_000 } });
    // A tool's event has no mark, and its value is diamonds.
    expect(PLATFORM_TABLE.api.mark).toBeNull();
    expect(PLATFORM_TABLE.api.unit.code).toBe('diamonds');
  });

  it('says the chat limits in words', () => {
    expect(chatPlatformsText()).toBe('Twitch, Kick or YouTube');
    expect(chatLimitsText()).toBe(
      'Cut to 500 characters on Twitch and Kick, 200 on YouTube. TikTok does not allow sending chat.',
    );
  });

  it('knows nothing of a name it does not hold, an inherited one included', () => {
    expect(platformFacts('twitch')?.name).toBe('Twitch');
    expect(platformFacts('myspace')).toBeUndefined();
    expect(platformFacts('toString')).toBeUndefined();
    expect(platformFacts('__proto__')).toBeUndefined();
  });
});
