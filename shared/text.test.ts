import { describe, expect, it } from 'vitest';
import { cutText, jsonHasLoneSurrogate, wellFormedJson, wellFormedText } from './text.js';

describe('cutText', () => {
  it('keeps an emoji at the limit whole or leaves it out whole', () => {
    expect(cutText('ab😀', 3)).toBe('ab');
    expect(cutText('ab😀', 4)).toBe('ab😀');
    expect(cutText('ab😀c', 4)).toBe('ab😀');
    expect(cutText('abc', 2)).toBe('ab');
    expect(cutText('abc', 5)).toBe('abc');
    expect(cutText('😀', 1)).toBe('');
  });
});

describe('well-formed text', () => {
  it('puts U+FFFD for each lone surrogate and keeps pairs', () => {
    expect(wellFormedText('a\ud800b')).toBe('a\ufffdb');
    expect(wellFormedText('\udc00x\ud83d')).toBe('\ufffdx\ufffd');
    expect(wellFormedText('ok 😀')).toBe('ok 😀');
  });

  it('mends every string of a JSON value, and hands back the same value when nothing needs it', () => {
    const sound = { a: ['x', { b: 'y' }], n: 1 };
    expect(wellFormedJson(sound)).toBe(sound);
    expect(wellFormedJson({ a: ['x', { b: 'y\udfff' }], n: 1 })).toEqual({
      a: ['x', { b: 'y\ufffd' }],
      n: 1,
    });
    expect(jsonHasLoneSurrogate(JSON.stringify({ t: 'a\ud800' }))).toBe(true);
    expect(jsonHasLoneSurrogate(JSON.stringify({ t: 'a😀' }))).toBe(false);
  });
});
