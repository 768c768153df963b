import { describe, expect, it } from 'vitest';
import { chatText, cutTo } from './cut.js';

describe('chat text', () => {
  it('is sent as rendered when it fits', () => {
    expect(chatText('Thank you Bob for 5 × Rose!', 'twitch')).toBe('Thank you Bob for 5 × Rose!');
  });

  it("is cut to the platform's limit in code points, its last one replaced by …", () => {
    const long = 'a'.repeat(600);
    expect(Array.from(chatText(long, 'twitch'))).toHaveLength(500);
    expect(chatText(long, 'twitch').endsWith('a…')).toBe(true);
    expect(Array.from(chatText(long, 'kick'))).toHaveLength(500);
    expect(Array.from(chatText(long, 'youtube'))).toHaveLength(200);
    // Exactly at the limit: nothing is cut.
    expect(chatText('b'.repeat(200), 'youtube')).toBe('b'.repeat(200));
  });

  it('counts an emoji as one and never splits it', () => {
    const emojis = '😀'.repeat(250);
    const cut = chatText(emojis, 'youtube');
    expect(Array.from(cut)).toHaveLength(200);
    expect(cut).toBe(`${'😀'.repeat(199)}…`);
    // 250 emojis are 500 UTF-16 units but 250 code points: within Twitch's 500.
    expect(chatText(emojis, 'twitch')).toBe(emojis);
  });

  it('turns line breaks and tabs into spaces and removes other control characters', () => {
    expect(cutTo('line one\nline two\r\nthree\tfour', 500)).toBe('line one line two three four');
    expect(cutTo('bell\u0007 and escape\u001b[31m red\u0085end\u007f', 500)).toBe(
      'bell and escape[31m red end',
    );
  });

  it('is empty when nothing but spaces and control characters is left', () => {
    expect(chatText('  \n\t\u0000 ', 'kick')).toBe('');
  });
});
