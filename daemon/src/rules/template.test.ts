import { describe, expect, it } from 'vitest';
import { compilePayload, compileTemplate, lookup, parseTemplate } from './template.js';

const event = {
  type: 'gift',
  user: { uniqueId: 'rosa', nickname: 'Rosa' },
  data: { giftName: 'Rose', repeatCount: 99, diamondCount: 1, tags: ['a', 'b'], nested: { deep: true } },
};

describe('templates', () => {
  it('fills placeholders from the event', () => {
    const render = compileTemplate('{user.nickname} sent {data.repeatCount} × {data.giftName}');
    expect(render(event)).toBe('Rosa sent 99 × Rose');
  });

  it('gives each event its own text when many rules use the same template', () => {
    const text = '{user.nickname} sent {data.giftName}';
    const first = compileTemplate(text);
    const second = compileTemplate(text);
    const rosa = { ...event };
    const ann = { ...event, user: { uniqueId: 'ann', nickname: 'Ann' }, data: { giftName: 'Lion' } };
    expect([first(rosa), second(rosa), first(ann), second(ann), first(rosa)]).toEqual([
      'Rosa sent Rose',
      'Rosa sent Rose',
      'Ann sent Lion',
      'Ann sent Lion',
      'Rosa sent Rose',
    ]);
  });

  it('renders missing paths, objects and non-finite numbers as empty', () => {
    const render = compileTemplate('[{user.missing}][{data.nested}][{nope.at.all}][{data.nan}][{data.tags}]');
    expect(render({ ...event, data: { ...event.data, nan: Number.NaN } })).toBe('[][][][][]');
  });

  it('reads array items by index and booleans', () => {
    expect(compileTemplate('{data.tags.1} {data.nested.deep}')(event)).toBe('b true');
  });

  it('keeps text that is not a placeholder and un-escapes doubled braces', () => {
    expect(compileTemplate('{ not a path } {{data.giftName}} {}')(event)).toBe(
      '{ not a path } {data.giftName} {}',
    );
    expect(parseTemplate('plain')).toEqual(['plain']);
  });

  it('never reaches prototypes, constructors or getters', () => {
    const hostile = [
      '{__proto__}',
      '{__proto__.x}',
      '{constructor}',
      '{constructor.name}',
      '{user.constructor.constructor}',
      '{data.toString}',
      '{data.hasOwnProperty}',
      '{user.__proto__.polluted}',
      '{data.tags.length}',
      '{prototype}',
    ];
    for (const t of hostile) expect(compileTemplate(t)(event), t).toBe('');
    let ran = false;
    const withGetter = { data: {} };
    Object.defineProperty(withGetter.data, 'secret', {
      enumerable: true,
      get: () => {
        ran = true;
        return 'leak';
      },
    });
    expect(compileTemplate('{data.secret}')(withGetter)).toBe('');
    expect(ran).toBe(false);
    // Class instances are not plain data.
    expect(compileTemplate('{data.when.x}')({ data: { when: Object.assign(new Date(), { x: 1 }) } })).toBe(
      '',
    );
    expect(
      lookup({ data: JSON.parse('{"__proto__": {"x": "p"}}') }, ['data', '__proto__', 'x']),
    ).toBeUndefined();
  });

  it('compiles whole payloads: strings templated, other values kept, no prototype keys', () => {
    const payload = JSON.parse(
      '{"text":"{user.nickname}!","duration":4000,"loud":true,"none":null,"list":["{data.giftName}",2],"inner":{"t":"{data.repeatCount}"},"__proto__":{"polluted":"yes"}}',
    );
    const out = compilePayload(payload)(event);
    expect(out).toEqual({
      text: 'Rosa!',
      duration: 4000,
      loud: true,
      none: null,
      list: ['Rose', 2],
      inner: { t: '99' },
    });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('drops functions and stops at a depth limit', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i++) deep = { d: deep };
    expect(() => compilePayload(deep)(event)).not.toThrow();
    expect(compilePayload({ f: () => 1, ok: 1 })(event)).toEqual({ ok: 1 });
  });
});
