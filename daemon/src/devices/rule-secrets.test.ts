import { describe, expect, it } from 'vitest';
import type { Rule, RuleList } from '../../../shared/rules.js';
import {
  isTheSavedRule,
  redactUrl,
  redactUrlsIn,
  restoreHidden,
  ruleForDevice,
  storedHeaderMoved,
} from './rule-secrets.js';

const webhook = (url: string, headers?: Record<string, string>): Rule => ({
  id: 'hook',
  name: 'Hook',
  enabled: true,
  trigger: 'gift',
  conditions: {},
  cooldownMs: 0,
  actions: [{ kind: 'webhook', url, ...(headers ? { headers } : {}) }],
});

describe('a URL as a moderator reads it', () => {
  it('keeps the scheme, host and port, and hides the rest (where webhook tokens live)', () => {
    expect(redactUrl('https://discord.com/api/webhooks/1/t0ken')).toBe('https://discord.com/[redacted]');
    expect(redactUrl('http://127.0.0.1:8080/x?key=1')).toBe('http://127.0.0.1:8080/[redacted]');
    expect(redactUrl('https://user:pw@example.com/')).toBe('https://example.com/[redacted]');
    expect(redactUrl('https://example.com/')).toBe('https://example.com/');
    expect(redactUrl('not a url')).toBe('[redacted]');
  });

  it('in a text, every URL is cut the same way', () => {
    expect(redactUrlsIn('cannot reach https://h.example/a/b?c=d: ECONNREFUSED')).toBe(
      'cannot reach https://h.example/[redacted]: ECONNREFUSED',
    );
  });
});

describe('a rule as a moderator reads it', () => {
  it('hides every header but the plain ones, and stays a valid rule', () => {
    const read = ruleForDevice(
      webhook('https://h.example/t', { Authorization: 'Bearer x', 'content-type': 'application/json' }),
    );
    expect(read.actions[0]).toMatchObject({
      url: 'https://h.example/[redacted]',
      headers: { Authorization: '[redacted]', 'content-type': 'application/json' },
    });
  });

  it('a rule without webhooks is left as it is', () => {
    const rule: Rule = {
      ...webhook('https://h.example/'),
      actions: [{ overlayId: 'x', widgetId: 'w', command: 'show' }],
    } as Rule;
    expect(ruleForDevice(rule)).toBe(rule);
  });
});

describe('a stored header sent elsewhere', () => {
  const saved: RuleList = [webhook('https://h.example/a', { Authorization: 'Bearer s3cret' })];

  it('is named: the same value to another host', () => {
    expect(
      storedHeaderMoved(saved, [webhook('https://evil.example/a', { 'X-Key': 'Bearer s3cret' })]),
    ).toMatch(/stored X-Key header would be sent to https:\/\/evil\.example/);
  });

  it('is not: the same host, a header typed anew, or a plain header', () => {
    expect(
      storedHeaderMoved(saved, [webhook('https://h.example/b', { Authorization: 'Bearer s3cret' })]),
    ).toBeUndefined();
    expect(
      storedHeaderMoved(saved, [webhook('https://evil.example/', { Authorization: 'new' })]),
    ).toBeUndefined();
    const plain: RuleList = [webhook('https://h.example/', { 'Content-Type': 'text/plain' })];
    expect(
      storedHeaderMoved(plain, [webhook('https://o.example/', { 'Content-Type': 'text/plain' })]),
    ).toBeUndefined();
  });
});

describe('the saved rule', () => {
  it('is recognised as saved or as a moderator read it, and nothing else is', () => {
    const saved = webhook('https://h.example/t0ken', { Authorization: 'Bearer s3cret' });
    expect(isTheSavedRule(structuredClone(saved), saved)).toBe(true);
    expect(isTheSavedRule(ruleForDevice(saved), saved)).toBe(true);
    expect(
      isTheSavedRule(webhook('https://h.example/other', { Authorization: 'Bearer s3cret' }), saved),
    ).toBe(false);
  });
});

describe('what a device sends back hidden', () => {
  const saved: RuleList = [webhook('https://h.example/t0ken', { Authorization: 'Bearer s3cret' })];

  it('keeps the stored URL and headers of the same rule and action', () => {
    const restored = restoreHidden(saved, [{ ...ruleForDevice(saved[0]!), name: 'Renamed' }]);
    expect(restored).toEqual({ ok: true, rules: [{ ...saved[0], name: 'Renamed' }] });
  });

  it('is refused when nothing is stored behind it, naming the field', () => {
    const other = { ...webhook('https://h.example/[redacted]'), id: 'other' };
    expect(restoreHidden(saved, [other])).toEqual({
      ok: false,
      message: 'rules.0.actions.0.url: its address is hidden; type it again',
    });
    const header = { ...webhook('https://h.example/', { 'X-Key': '[redacted]' }) };
    expect(restoreHidden(saved, [header])).toMatchObject({ ok: false, message: /headers\.X-Key/ });
  });

  it('leaves values typed anew as they are', () => {
    const typed = [webhook('https://o.example/x', { Authorization: 'Bearer new' })];
    expect(restoreHidden(saved, typed)).toEqual({ ok: true, rules: typed });
  });
});
