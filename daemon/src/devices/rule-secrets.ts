// The credentials rules carry, as paired devices meet them (decisions-3 §11): a moderator reads rules and
// outcomes with webhook tokens and stored headers hidden, and a device's save may not send a stored
// header to another host (moving a secret is as good as reading it).
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

/** A rule as a moderator reads it: each webhook's URL down to its origin, its secret headers hidden. */
export function ruleForModerator(rule: Rule): Rule {
  if (!rule.actions.some((a) => a.kind === 'webhook')) return rule;
  return { ...rule, actions: rule.actions.map((a) => (a.kind === 'webhook' ? redactWebhook(a) : a)) };
}

export const rulesForModerator = (rules: RuleList): RuleList => rules.map(ruleForModerator);

/** Action outcomes as a moderator reads them: an error naming the address it failed at names only its origin. */
export const outcomesForModerator = <T extends { error?: string | undefined }>(outcomes: readonly T[]): T[] =>
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
 * to the moderator's view of it (the dashboard sends back what it read).
 */
export function isTheSavedRule(sent: Rule, saved: Rule): boolean {
  const canonical = v.safeParse(Rule, saved);
  const stored = canonical.success ? canonical.output : saved;
  return isDeepStrictEqual(sent, stored) || isDeepStrictEqual(sent, ruleForModerator(stored));
}
