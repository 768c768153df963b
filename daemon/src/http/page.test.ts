// Unit tests of the injected globals: no value can leave its script element (decisions §3).
import { describe, expect, it } from 'vitest';
import { scriptSafeJson } from '../../../shared/page-globals.js';
import { injectGlobals } from './page.js';

const PAGE =
  '<!doctype html><html><head><meta charset="utf-8"></head><body><script type="module" src="/x.js"></script></body></html>';

describe('injectGlobals', () => {
  it('puts the three globals first in <head>, as JSON', () => {
    const html = injectGlobals(PAGE, { overlayId: 'abc', port: 7890, token: 't0k' });
    expect(html).toContain(
      '<head><script>window.__APP_OVERLAY_ID__="abc";window.__APP_PORT__=7890;window.__APP_TOKEN__="t0k";</script><meta',
    );
  });

  it.each([
    ['a closing script tag', '</script><script>alert(1)</script>'],
    ['an upper-case closing tag', '</SCRIPT ><img src=x onerror=alert(1)>'],
    ['an HTML comment opener', '<!--<script>'],
    ['line separators', 'a\u2028b\u2029c'],
    ['quotes and backslashes', '"\\";alert(1);//'],
  ])('keeps %s inside the script element, and the value round-trips', (_what, value) => {
    const html = injectGlobals(PAGE, { overlayId: value, port: 1, token: value });
    const start = html.indexOf('<script>') + '<script>'.length;
    const end = html.indexOf('</script>', start);
    const body = html.slice(start, end);
    // Exactly one script element was added and its text holds no markup at all.
    expect(html.split('<script').length).toBe(PAGE.split('<script').length + 1);
    expect(body).not.toMatch(/[<>]/);
    expect(body).not.toMatch(/[\u2028\u2029]/);
    const globals: Record<string, unknown> = {};
    new Function('window', body)(globals);
    expect(globals.__APP_OVERLAY_ID__).toBe(value);
    expect(globals.__APP_TOKEN__).toBe(value);
  });

  it('writes plain strings and numbers exactly as JSON.stringify does', () => {
    for (const value of ['0f8fad5b-d9cb-469f-a165-70867728950e', 'aZ09_-.:', '', 7890, -1.5, Number.NaN]) {
      expect(scriptSafeJson(value)).toBe(JSON.stringify(value));
    }
  });

  it('puts the globals first when the page has no <head>', () => {
    const html = injectGlobals('<p>x</p>', { overlayId: 'abc', port: 1, token: 't' });
    expect(html.startsWith('<script>window.__APP_OVERLAY_ID__="abc";')).toBe(true);
    expect(html.endsWith('</script><p>x</p>')).toBe(true);
  });

  it('escapes &, < and > in any JSON value', () => {
    expect(scriptSafeJson({ a: '<&>' })).toBe('{"a":"\\u003c\\u0026\\u003e"}');
  });
});
