// platform-mark.css draws a mark for every platform and money provider of the platform table, with the
// glyph the table names: a platform the stylesheet forgot would show as an empty grey dot.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MONEY_PROVIDERS, PLATFORM_TABLE, SOURCE_PLATFORMS } from '../../../shared/platforms.js';

const css = readFileSync(new URL('./platform-mark.css', import.meta.url), 'utf8').replace(
  /\/\*[\s\S]*?\*\//g,
  '',
);

/** The declarations of every rule naming `.platform-mark[data-platform="<id>"]` (with `::before` or not). */
function declarations(id: string, pseudo: '' | '::before'): string {
  const selector = `.platform-mark[data-platform="${id}"]${pseudo}`;
  let found = '';
  for (const [, selectors = '', body = ''] of css.matchAll(/([^{}]+)\{([^}]*)\}/g)) {
    if (selectors.split(',').some((s) => s.trim() === selector)) found += body;
  }
  return found;
}

/** A CSS string's text: `"\25B6\FE0E"` is "▶︎". */
function cssString(value: string): string {
  return value
    .trim()
    .replace(/^"|"$/g, '')
    .replace(/\\([0-9a-fA-F]{1,6}) ?/g, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)));
}

describe('platform-mark.css', () => {
  it.each([...SOURCE_PLATFORMS, ...MONEY_PROVIDERS])(
    'draws the mark of %s: its colour and its glyph',
    (id) => {
      expect(declarations(id, '')).toMatch(/(^|;|\s)background:\s*#[0-9a-f]{6}\s*;/i);
      const content = /content:\s*("[^"]*")/.exec(declarations(id, '::before'))?.[1];
      expect(content, `no ::before content for ${id}`).toBeDefined();
      expect(cssString(content ?? '')).toBe(PLATFORM_TABLE[id].mark);
    },
  );

  it('draws no mark for an event posted by a tool, nor for a platform the table does not know', () => {
    expect(PLATFORM_TABLE.api.mark).toBeNull();
    const named = [...css.matchAll(/data-platform="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(named)).toEqual(new Set([...SOURCE_PLATFORMS, ...MONEY_PROVIDERS]));
  });
});
