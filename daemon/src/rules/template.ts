// Payload templates of rule actions: `{user.nickname} sent {data.repeatCount} × {data.giftName}`.
//
// A placeholder is a dotted path of names; it reads only own data properties of plain objects
// (never prototypes, getters or functions), so a template cannot reach or run anything. A path
// that leads nowhere renders as the empty string. `{{` and `}}` write literal braces.

/** The values a template sees: the stream event's fields. */
export type TemplateContext = Readonly<Record<string, unknown>>;

type Part = string | readonly string[];
export type Renderer = (context: TemplateContext) => unknown;

const PLACEHOLDER = /\{\{|\}\}|\{([A-Za-z0-9_$-]+(?:\.[A-Za-z0-9_$-]+){0,7})\}/g;
/** Names that could reach an object's machinery rather than its data. */
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
const MAX_DEPTH = 16;

function isPlainObject(value: unknown): value is object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** An own data property of a plain object (or an array index), else undefined. */
function step(value: unknown, key: string): unknown {
  if (FORBIDDEN.has(key)) return undefined;
  const container = Array.isArray(value)
    ? /^\d+$/.test(key)
      ? value
      : undefined
    : isPlainObject(value)
      ? value
      : undefined;
  if (!container) return undefined;
  const descriptor = Object.getOwnPropertyDescriptor(container, key);
  return descriptor && 'value' in descriptor ? descriptor.value : undefined;
}

/** Resolves a path against the context; exported for tests and for the docs' examples. */
export function lookup(context: TemplateContext, path: readonly string[]): unknown {
  let current: unknown = context;
  for (const key of path) current = step(current, key);
  return current;
}

/** Strings, finite numbers and booleans print; anything else (objects, null, missing) is empty. */
function display(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return String(value);
  return '';
}

/** Splits a template once, when rules load. */
export function parseTemplate(template: string): readonly Part[] {
  const parts: Part[] = [];
  let literal = '';
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    literal += template.slice(last, match.index);
    last = match.index + match[0].length;
    if (match[0] === '{{') literal += '{';
    else if (match[0] === '}}') literal += '}';
    else {
      if (literal) parts.push(literal);
      literal = '';
      parts.push(match[1]!.split('.'));
    }
  }
  literal += template.slice(last);
  if (literal) parts.push(literal);
  return parts;
}

/**
 * A template's renderer. `escapeValue`, when given, is applied to each placeholder's value (never to the
 * template's own text): percent-encoding in a URL, JSON string escaping in a JSON body.
 */
export function compileTemplate(
  template: string,
  escapeValue?: (value: string, index: number) => string,
): (context: TemplateContext) => string {
  const parts = parseTemplate(template);
  if (parts.every((p) => typeof p === 'string')) {
    const text = parts.join('');
    return () => text;
  }
  const render = (context: TemplateContext): string => {
    let out = '';
    let index = 0;
    for (const part of parts) {
      if (typeof part === 'string') out += part;
      else {
        const value = display(lookup(context, part));
        out += escapeValue ? escapeValue(value, index) : value;
        index++;
      }
    }
    return out;
  };
  return escapeValue ? render : shared(template, render);
}

/** Plain templates by their text: rules that say the same thing render it once per event. */
const SHARED = new Map<string, (context: TemplateContext) => string>();
const SHARED_MAX = 10_000;

/**
 * One renderer per template text, remembering its last context and text: forty rules showing the same
 * alert text render it once for a gift, not forty times. A context is made once per event and never
 * changed, so the same context always renders the same text.
 */
function shared(
  template: string,
  render: (context: TemplateContext) => string,
): (context: TemplateContext) => string {
  let remembering = SHARED.get(template);
  if (remembering) return remembering;
  let lastContext: TemplateContext | undefined;
  let lastText = '';
  remembering = (context) => {
    if (context !== lastContext) {
      lastText = render(context);
      lastContext = context;
    }
    return lastText;
  };
  if (SHARED.size >= SHARED_MAX) SHARED.clear();
  SHARED.set(template, remembering);
  return remembering;
}

/** Where a placeholder of a URL template stands. */
type UrlPart = 'origin' | 'path' | 'query' | 'fragment';

/** The part of a URL each placeholder of the template stands in, in order (from the template's own text). */
export function urlPlaceholderParts(template: string): UrlPart[] {
  const parts: UrlPart[] = [];
  let seen = '';
  for (const part of parseTemplate(template)) {
    if (typeof part === 'string') {
      seen += part;
      continue;
    }
    const scheme = seen.indexOf('://');
    const afterScheme = scheme === -1 ? '' : seen.slice(scheme + 3);
    parts.push(
      seen.includes('#')
        ? 'fragment'
        : seen.includes('?')
          ? 'query'
          : scheme !== -1 && afterScheme.includes('/')
            ? 'path'
            : 'origin',
    );
  }
  return parts;
}

/**
 * A webhook URL template's renderer. Each placeholder's value is percent-encoded as by
 * `encodeURIComponent` (a space is `%20`, `/`, `?`, `#`, `&` and `=` are encoded), so viewer text
 * stays inside the part it stands in: it adds no query parameter, walks no path, moves no host.
 * Throws at compile time when a placeholder stands in the scheme, user info, host or port (the rules'
 * schema refuses those at save), and at render time when a value in the path is `.` or `..` (a URL
 * resolves such a segment, whatever its encoding).
 */
export function compileUrlTemplate(template: string): (context: TemplateContext) => string {
  const where = urlPlaceholderParts(template);
  if (where.includes('origin'))
    throw new Error('its URL has a placeholder in the scheme, user info, host or port');
  return compileTemplate(template, (value, index) => {
    if (where[index] === 'path' && (value === '.' || value === '..'))
      throw new Error(`a placeholder's value "${value}" would move up the URL's path`);
    return encodeURIComponent(value);
  });
}

/** A placeholder's value as the inside of a JSON string: `"` and `\` escaped, control characters as `\u…`. */
export function jsonStringEscape(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

/** Whether a text body reads as JSON (an object or an array): its placeholders then get JSON string escaping. */
export function looksLikeJson(text: string): boolean {
  return /^\s*[[{]/.test(text);
}

/**
 * Compiles a whole payload: every string anywhere inside becomes a template; numbers, booleans and
 * null are kept; anything else (functions, class instances, deeper than 16 levels) is dropped.
 */
export function compilePayload(value: unknown, depth = 0): Renderer {
  if (typeof value === 'string') return compileTemplate(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return () => value;
  if (depth >= MAX_DEPTH) return () => undefined;
  if (Array.isArray(value)) {
    const items = value.map((item) => compilePayload(item, depth + 1));
    return (context) => items.map((render) => render(context));
  }
  if (isPlainObject(value)) {
    const entries = Object.keys(value)
      .filter((key) => !FORBIDDEN.has(key))
      .map((key) => [key, compilePayload(step(value, key), depth + 1)] as const);
    // The keys that could reach a prototype are gone, so assigning the others defines own properties.
    return (context) => {
      const out: Record<string, unknown> = {};
      for (const [key, render] of entries) {
        const rendered = render(context);
        if (rendered !== undefined) out[key] = rendered;
      }
      return out;
    };
  }
  return () => undefined;
}
