import { describe, expect, it } from 'vitest';
import { blockedWord, speechText } from './speech-text.js';

describe('speechText', () => {
  it('removes espeak-ng phoneme brackets and `say` commands, leaving their letters as words', () => {
    expect(speechText('hello [[h@l"oU]] there')).toBe('hello h@l"oU there');
    expect(speechText('[[volm 2]][[rate 500]] loud and fast')).toBe('volm 2rate 500 loud and fast');
    // Full-width brackets fold to plain ones first, so they go too.
    expect(speechText('\uff3b\uff3bfVk\uff3d\uff3d')).toBe('fVk');
    expect(speechText('a [ b ] c')).toBe('a b c');
  });

  it("removes tags' brackets: nothing is read as SSML or SAPI XML", () => {
    expect(speechText('<prosody volume="x-loud">hi</prosody>')).toBe('prosody volume="x-loud"hi/prosody');
    expect(speechText('<speak><audio src="http://x"/></speak>')).not.toMatch(/[<>]/);
  });

  it('removes U+0001 (espeak-ng embedded commands) and every other control or invisible character', () => {
    expect(speechText('\u000150A\u0001 quiet? \u000180S\u0001 slow?')).toBe('50A quiet? 80S slow?');
    expect(speechText('a\u0000b\u001bc\u007fd\u0085e\u009bf')).toBe('abcd ef');
    expect(speechText('zero\u200bwidth\u200d join\u2066ed\u00ad')).toBe('zerowidth joined');
    expect(speechText('lone \ud800 surrogate \ue000')).toBe('lone surrogate');
    for (const text of ['\u0001', '\u0002\u0003', '\u0001\u0001']) expect(speechText(`x${text}y`)).toBe('xy');
  });

  it('makes breaks and runs of white space one space, and trims', () => {
    expect(speechText('  one\r\ntwo\tthree\u2028four  ')).toBe('one two three four');
    expect(speechText('[[]] \u0001 <> ')).toBe('');
  });

  it('leaves ordinary text alone', () => {
    for (const text of ['Bonjour à tous!', 'Rosa sent 99 × Rose', "it's 5 o'clock, isn't it?", '日本語の文'])
      expect(speechText(text)).toBe(text);
  });
});

describe('blockedWord on the plain text', () => {
  const words = ['spoiler', 'Badword'];
  it('finds a word split by phoneme brackets, markup or an invisible character', () => {
    for (const hidden of [
      'the spoi[[]]ler is here',
      'the spoi<>ler is here',
      'the spoi\u0001ler is here',
      'the spoi\u200bler is here',
      'BAD\u00adWORD',
      '[[badword]]',
      '\uff53\uff50\uff4f\uff49\uff4c\uff45\uff52',
    ]) {
      expect(blockedWord(speechText(hidden), words), hidden).toBeDefined();
    }
  });

  it('matches whole words only, in any case', () => {
    expect(blockedWord('the SPOILER is here', words)).toBe('spoiler');
    expect(blockedWord('no spoilers please', words)).toBeUndefined();
    expect(blockedWord('anything', ['', 'x'])).toBeUndefined();
  });
});
