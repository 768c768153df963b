// The credentials rules carry, as paired devices meet them (decisions-3 §11): a device reads rules and
// outcomes with webhook tokens and stored headers hidden, like the settings' secrets; what it sends back
// hidden keeps the stored value, and its save may not send a stored header to another host (moving a
// secret is as good as reading it).
import { isDeepStrictEqual } from 'node:util';
import * as v from 'valibot';
import { Rule, type RuleList } from '../../../shared/rules.js';

/** What stands where a secret was; the daemon's log redacts the same way (http-client/fetch-json.ts). */
export const HIDDEN = '[redacted]';

/** Headers that carry no credential. Every other header of a webhook counts as a secret. */
const PLAIN_HEADERS = new Set([
  'accept',
  'accept-language',
  'content-language',
  'content-type',
  'user-agent',
]);

export const isSecretHeader = (name: string): boolean => !PLAIN_HEADERS.has(name.toLowerCase());

type WebhookRuleAction = Extract<Rule['actions'][number], { kind: 'webhook' }>;

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * A URL with only its scheme, host and port left: the user info, path, query and fragment (where Discord
 * and Slack keep a webhook's token, and many APIs a key) become `[redacted]`. A bare origin stays as it is.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return HIDDEN;
  }
  const bare = parsed.username === '' && parsed.password === '' && parsed.pathname === '/';
  if (bare && parsed.search === '' && parsed.hash === '') return url;
  return `${parsed.origin}/${HIDDEN}`;
}

/** Every http(s) URL in a text (an outcome's error names the address it could not reach) redacted. */
export function redactUrlsIn(text: string): string {
  // Punctuation that ends the sentence around a URL stays in the sentence.
  return text.replace(/https?:\/\/[^\s"'<>`]+?(?=[.,;:)]*(?:\s|$))/gi, (url) => redactUrl(url));
}

function redactWebhook(action: WebhookRuleAction): WebhookRuleAction {
  const headers = action.headers && Object.entries(action.headers);
  return {
    ...action,
    url: redactUrl(action.url),
    ...(headers
      ? {
          headers: Object.fromEntries(
            headers.map(([name, value]) => [name, isSecretHeader(name) ? HIDDEN : value]),
          ),
        }
      : {}),
  };
}

/** A rule as a device reads it: each webhook's URL down to its origin, its secret headers hidden. */
export function ruleForDevice(rule: Rule): Rule {
  if (!rule.actions.some((a) => a.kind === 'webhook')) return rule;
  return { ...rule, actions: rule.actions.map((a) => (a.kind === 'webhook' ? redactWebhook(a) : a)) };
}

export const rulesForDevice = (rules: RuleList): RuleList => rules.map(ruleForDevice);

/** Action outcomes as a device reads them: an error naming the address it failed at names only its origin. */
export const outcomesForDevice = <T extends { error?: string | undefined }>(outcomes: readonly T[]): T[] =>
  outcomes.map((o) => (o.error === undefined ? o : { ...o, error: redactUrlsIn(o.error) }));

/**
 * The first webhook of `next` that would send a secret header value stored in `current` to an origin it
 * does not go to now, in words; undefined when none would. A device may edit such a webhook, and move one
 * whose headers it types anew, but not point the stored credential at a host of its choosing.
 */
export function storedHeaderMoved(current: RuleList, next: RuleList): string | undefined {
  const goesTo = new Map<string, Set<string | undefined>>();
  for (const rule of current)
    for (const action of rule.actions) {
      if (action.kind !== 'webhook' || !action.headers) continue;
      for (const [name, value] of Object.entries(action.headers)) {
        if (!isSecretHeader(name)) continue;
        const origins = goesTo.get(value) ?? new Set();
        origins.add(originOf(action.url));
        goesTo.set(value, origins);
      }
    }
  for (const rule of next)
    for (const [index, action] of rule.actions.entries()) {
      if (action.kind !== 'webhook' || !action.headers) continue;
      const origin = originOf(action.url);
      for (const [name, value] of Object.entries(action.headers)) {
        const origins = isSecretHeader(name) ? goesTo.get(value) : undefined;
        if (origins && (origin === undefined || !origins.has(origin)))
          return `rule "${rule.name || rule.id}", action ${index + 1}: its stored ${name} header would be sent to ${origin ?? 'another address'}`;
      }
    }
  return undefined;
}

/**
 * Whether a rule a device sent is the saved one: equal to it once both are read by the rule schema, or
 * to the device's view of it (the dashboard sends back what it read).
 */
export function isTheSavedRule(sent: Rule, saved: Rule): boolean {
  const canonical = v.safeParse(Rule, saved);
  const stored = canonical.success ? canonical.output : saved;
  return isDeepStrictEqual(sent, stored) || isDeepStrictEqual(sent, ruleForDevice(stored));
}

export type Restored = { ok: true; rules: RuleList } | { ok: false; message: string };

/**
 * The rules a device saves, with what it read hidden put back: a webhook URL still as `redactUrl` showed
 * it, and each header still `[redacted]`, keep the stored ones of the same rule and action. A hidden
 * value with nothing stored behind it is refused, so `[redacted]` is never saved as a URL or a header.
 */
export function restoreHidden(current: RuleList, next: RuleList): Restored {
  const byId = new Map(current.map((rule) => [rule.id, rule]));
  const rules: Rule[] = [];
  for (const [r, rule] of next.entries()) {
    const stored = byId.get(rule.id);
    const actions: Rule['actions'] = [];
    for (const [a, action] of rule.actions.entries()) {
      if (action.kind !== 'webhook') {
        actions.push(action);
        continue;
      }
      const before = stored?.actions[a];
      const was = before?.kind === 'webhook' ? before : undefined;
      const at = `rules.${r}.actions.${a}`;
      let url = action.url;
      if (was && url === redactUrl(was.url)) url = was.url;
      else if (url.includes(HIDDEN))
        return { ok: false, message: `${at}.url: its address is hidden; type it again` };
      let headers = action.headers;
      if (headers) {
        const kept: Record<string, string> = {};
        for (const [name, value] of Object.entries(headers)) {
          if (value !== HIDDEN) {
            kept[name] = value;
            continue;
          }
          const storedValue = Object.entries(was?.headers ?? {}).find(
            ([storedName]) => storedName.toLowerCase() === name.toLowerCase(),
          )?.[1];
          if (storedValue === undefined)
            return { ok: false, message: `${at}.headers.${name}: its value is hidden; type it again` };
          kept[name] = storedValue;
        }
        headers = kept;
      }
      actions.push({ ...action, url, ...(headers ? { headers } : {}) });
    }
    rules.push({ ...rule, actions });
  }
  return { ok: true, rules };
}
