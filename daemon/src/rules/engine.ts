// Evaluates the rules of rules.json against each stream event and produces the actions to run.
import { describeEvent } from '../../../shared/describe-event.js';
import type { Platform, StreamEvent } from '../../../shared/protocol/index.js';
import {
  type ChatTarget,
  isOverlayAction,
  type ObsRequest,
  type Rule,
  type RuleAction,
  type RuleList,
} from '../../../shared/rules.js';
import { errorMessage } from '../errors.js';
import {
  compilePayload,
  compileTemplate,
  compileUrlTemplate,
  jsonStringEscape,
  looksLikeJson,
  type TemplateContext,
} from './template.js';

/** What every fired action carries: its rule, its place in the rule, and how it waits. */
interface FiredBase {
  ruleId: string;
  /** How logs name the rule: its name, or its id when it has none. */
  ruleName: string;
  /** Its index in the rule's actions (the action log names actions by it). */
  index: number;
  delayMs?: number;
  queue?: string;
}

/** One action of a fired rule, its templates rendered against the event. */
export type FiredAction = FiredBase &
  (
    | {
        kind: 'overlay';
        overlayId: string;
        widgetId: string;
        command: string;
        payload: Record<string, unknown>;
      }
    | {
        kind: 'webhook';
        url: string;
        /** The origin of the rule's own URL: the rendered URL must keep it. */
        origin: string;
        method: 'POST' | 'GET' | 'PUT';
        headers: Record<string, string>;
        body: unknown;
      }
    | { kind: 'streamerbot'; action: string; args: Record<string, unknown> }
    | { kind: 'obs'; request: ObsRequest; params: Record<string, unknown>; revertAfterMs?: number }
    | {
        kind: 'speak';
        text: string;
        overlayId: string;
        voice?: string;
        rate?: number;
        volume?: number;
        /** The viewer whose event it was (`user.uniqueId`), for speech's per-viewer cooldown. */
        sender: string;
      }
    | {
        kind: 'chat';
        /** Filled in, not yet cut: each platform's limit applies when it is sent. */
        text: string;
        platform: ChatTarget;
        /** The platform the event came from: where `same` writes. */
        from: Platform;
        /** A rule test: what would be sent is shown, nothing is sent. */
        preview?: true;
      }
  );

interface RuleFailure {
  ruleId: string;
  /** The rule's name, or its id when it has none (what log lines say). */
  ruleName: string;
  message: string;
}

/** How a log line names a rule: by its name, or by its id when it has none. */
export function ruleLabel(rule: { id: string; name?: string | undefined }): string {
  return rule.name?.trim() || rule.id;
}

interface Evaluation {
  actions: FiredAction[];
  /** Rules that failed on this event; they were skipped, the others still ran. */
  errors: RuleFailure[];
}

interface CompiledRule {
  rule: Rule;
  giftName?: string;
  chatIncludes?: string;
  userId?: string;
  /** The chat command, lowercased. */
  command?: string;
  /** Each action with its templates compiled once; `render` gives the fired action for an event. */
  actions: ActionRender[];
}

/** Renders one compiled action for an event (`context` is what its templates see). */
type ActionRender = (context: TemplateContext, event: StreamEvent) => FiredAction;

interface RuleEngineOptions {
  /** Milliseconds; cooldowns are measured on it. */
  now?: () => number;
}

/** What the event offers to conditions and templates. */
function gift(event: StreamEvent) {
  return event.type === 'gift' ? event.data : undefined;
}

function matches(compiled: CompiledRule, event: StreamEvent, likes: LikeTotals | undefined): boolean {
  const { rule } = compiled;
  const c = rule.conditions;
  if (rule.trigger !== event.type) return false;
  if (c.platform !== undefined && event.platform !== c.platform) return false;
  if (compiled.userId !== undefined && event.user.uniqueId.toLowerCase() !== compiled.userId) return false;
  const g = gift(event);
  if (compiled.giftName !== undefined && g?.giftName.toLowerCase() !== compiled.giftName) return false;
  if (c.minRepeatCount !== undefined && !(g && g.repeatCount >= c.minRepeatCount)) return false;
  if (c.minDiamonds !== undefined && !(g && (g.diamondCount ?? 0) * g.repeatCount >= c.minDiamonds))
    return false;
  if (c.minLikes !== undefined && !(event.type === 'like' && event.data.likeCount >= c.minLikes))
    return false;
  if (
    compiled.chatIncludes !== undefined &&
    !(event.type === 'chat' && event.data.comment.toLowerCase().includes(compiled.chatIncludes))
  )
    return false;
  if (
    compiled.command !== undefined &&
    !(event.type === 'chat' && firstWord(event.data.comment) === compiled.command)
  )
    return false;
  if (c.everyLikes !== undefined && !(event.type === 'like' && crossed(likes, c.everyLikes))) return false;
  return true;
}

/** The first word of a chat message, lowercased: `!Dance now` → `!dance`. */
function firstWord(comment: string): string {
  return comment.trim().split(/\s+/, 1)[0]?.toLowerCase() ?? '';
}

/** The room's like total before and after one like event. */
interface LikeTotals {
  before: number;
  after: number;
}

/** Whether the like total crossed a multiple of `every` with this event. */
function crossed(likes: LikeTotals | undefined, every: number): boolean {
  return likes !== undefined && Math.floor(likes.after / every) > Math.floor(likes.before / every);
}

/** How many times a rule's actions run for one gift event (`perUnit`: once per gift, at most 100). */
const MAX_PER_UNIT = 100;

/** Senders remembered for per-viewer cooldowns; the oldest are forgotten past this. */
const MAX_USER_COOLDOWNS = 10_000;

export class RuleEngine {
  private compiled: CompiledRule[] = [];
  /** The compiled rules of each trigger, in rule order: an event looks only at the rules of its type. */
  private byTrigger = new Map<string, CompiledRule[]>();
  /** Last time each rule fired, by rule id; kept across reloads so an edit does not reset cooldowns. */
  private readonly lastFired = new Map<string, number>();
  /** Last time each (rule, sender) fired, for `userCooldownMs`; in insertion order, oldest first. */
  private readonly lastFiredBy = new Map<string, number>();
  /** The room's like total when like events do not carry it: their `likeCount`s summed. */
  private likeSum = 0;
  private readonly now: () => number;

  constructor(rules: RuleList = [], options: RuleEngineOptions = {}) {
    this.now = options.now ?? (() => performance.now());
    this.load(rules);
  }

  /** Replaces the rules (already validated with RuleList); templates are compiled here, once. */
  load(rules: RuleList): RuleFailure[] {
    const failures: RuleFailure[] = [];
    const compiled: CompiledRule[] = [];
    for (const rule of rules) {
      try {
        const c = rule.conditions;
        compiled.push({
          rule,
          ...(c.giftName !== undefined ? { giftName: c.giftName.toLowerCase() } : {}),
          ...(c.chatIncludes !== undefined ? { chatIncludes: c.chatIncludes.toLowerCase() } : {}),
          ...(c.userId !== undefined ? { userId: c.userId.replace(/^@/, '').toLowerCase() } : {}),
          ...(c.command !== undefined ? { command: c.command.toLowerCase() } : {}),
          actions: rule.actions.map((a, index) => compileAction(rule, index, a)),
        });
      } catch (error) {
        failures.push({ ruleId: rule.id, ruleName: ruleLabel(rule), message: errorMessage(error) });
      }
    }
    this.compiled = compiled;
    this.byTrigger = new Map();
    for (const c of compiled) {
      const list = this.byTrigger.get(c.rule.trigger);
      if (list) list.push(c);
      else this.byTrigger.set(c.rule.trigger, [c]);
    }
    const ids = new Set(rules.map((r) => r.id));
    for (const id of this.lastFired.keys()) if (!ids.has(id)) this.lastFired.delete(id);
    return failures;
  }

  get size(): number {
    return this.compiled.length;
  }

  /**
   * The room's like total before and after a like event: the event's `totalLikeCount`
   * when it has one, else the sum of `likeCount`s this engine has seen.
   */
  private likeTotals(event: StreamEvent): LikeTotals | undefined {
    if (event.type !== 'like') return undefined;
    const count = event.data.likeCount;
    const total = event.data.totalLikeCount;
    if (total !== undefined) {
      this.likeSum = total;
      return { before: Math.max(0, total - count), after: total };
    }
    const before = this.likeSum;
    this.likeSum += count;
    return { before, after: this.likeSum };
  }

  private rememberSender(key: string, now: number): void {
    this.lastFiredBy.delete(key);
    this.lastFiredBy.set(key, now);
    while (this.lastFiredBy.size > MAX_USER_COOLDOWNS) {
      const oldest = this.lastFiredBy.keys().next().value;
      if (oldest === undefined) break;
      this.lastFiredBy.delete(oldest);
    }
  }

  /** Runs every enabled rule, in order, against one event. Never throws. */
  evaluate(event: StreamEvent): Evaluation {
    const actions: FiredAction[] = [];
    const errors: RuleFailure[] = [];
    let now: number | undefined;
    let context: TemplateContext | undefined;
    const likes = this.likeTotals(event);
    const candidates = this.byTrigger.get(event.type);
    if (!candidates) return { actions, errors };
    for (const compiled of candidates) {
      const { rule } = compiled;
      if (!rule.enabled) continue;
      try {
        if (!matches(compiled, event, likes)) continue;
        now ??= this.now();
        const last = this.lastFired.get(rule.id);
        if (rule.cooldownMs > 0 && last !== undefined && now - last < rule.cooldownMs) continue;
        const byKey = `${rule.id}\u0000${event.user.uniqueId.toLowerCase()}`;
        const lastBy = this.lastFiredBy.get(byKey);
        if (rule.userCooldownMs && lastBy !== undefined && now - lastBy < rule.userCooldownMs) continue;
        // Only a rule that produced all its actions counts as fired (and starts its cooldowns).
        context ??= templateContext(event);
        actions.push(...renderActions(rule, compiled.actions, event, context));
        this.lastFired.set(rule.id, now);
        if (rule.userCooldownMs) this.rememberSender(byKey, now);
      } catch (error) {
        errors.push({ ruleId: rule.id, ruleName: ruleLabel(rule), message: errorMessage(error) });
      }
    }
    return { actions, errors };
  }
}

/** What templates see of an event; built once per event, whatever number of rules it fires. */
/** What every template reads of an event: `{type}`, `{user.…}`, `{data.…}` and `{summary}`. */
export function templateContext(event: StreamEvent): TemplateContext {
  // `{summary}`: the event in one line, gifts in their platform's unit ("Bob cheered 100 bits").
  return { type: event.type, user: event.user, data: event.data, summary: describeEvent(event) };
}

/** A rule's actions rendered for an event: once, or once per gift of a streak with `perUnit`. */
function renderActions(
  rule: Rule,
  renders: readonly ActionRender[],
  event: StreamEvent,
  context: TemplateContext = templateContext(event),
): FiredAction[] {
  const once = renders.map((render) => render(context, event));
  const times = rule.perUnit && event.type === 'gift' ? Math.min(MAX_PER_UNIT, event.data.repeatCount) : 1;
  return times === 1 ? once : Array.from({ length: times }, () => once).flat();
}

/**
 * A rule's actions for one event, its conditions, cooldowns and `enabled` aside: what the dashboard's
 * "test this rule" runs. Throws when a template cannot be rendered.
 */
export function fireRule(rule: Rule, event: StreamEvent): FiredAction[] {
  return renderActions(
    rule,
    rule.actions.map((action, index) => compileAction(rule, index, action)),
    event,
  );
}

/**
 * The most a rendered command payload may weigh, serialised. Templates repeat event fields, so a small
 * event could otherwise expand into megabytes sent to every overlay client.
 */
export const MAX_RENDERED_PAYLOAD_BYTES = 64 * 1024;

function capped(payload: Record<string, unknown>): Record<string, unknown> {
  // Most payloads are a few short strings: a bound on their size says so without serialising them.
  if (sizeBound(payload, MAX_RENDERED_PAYLOAD_BYTES) <= MAX_RENDERED_PAYLOAD_BYTES) return payload;
  const size = Buffer.byteLength(JSON.stringify(payload));
  if (size > MAX_RENDERED_PAYLOAD_BYTES)
    throw new Error(`its rendered payload is ${size} bytes, over the limit of ${MAX_RENDERED_PAYLOAD_BYTES}`);
  return payload;
}

/**
 * An upper bound of the UTF-8 size of `JSON.stringify(value)` for what compilePayload renders (strings,
 * numbers, booleans, null, arrays and plain objects), or a figure past `limit` once it is clear the bound
 * is. A UTF-16 unit is at most 6 bytes escaped (`\u001f`), a number at most 24 characters.
 */
function sizeBound(value: unknown, limit: number): number {
  if (typeof value === 'string') return 6 * value.length + 2;
  if (typeof value !== 'object' || value === null) return 24;
  let size = 2;
  if (Array.isArray(value)) {
    for (const item of value) {
      size += sizeBound(item, limit) + 1;
      if (size > limit) return size;
    }
    return size;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    size += 6 * key.length + 4 + sizeBound(record[key], limit);
    if (size > limit) return size;
  }
  return size;
}

/** Compiles one action's templates; the returned function renders it for an event (size-capped). */
function compileAction(rule: Rule, index: number, action: RuleAction): ActionRender {
  // Every fired action is written out as one literal, its waits added after: an object spread followed by
  // more fields falls off V8's fast path, which cost microseconds per action of every event.
  const ruleId = rule.id;
  const ruleName = ruleLabel(rule);
  const waits = (fired: FiredAction): FiredAction => {
    if (action.delayMs) fired.delayMs = action.delayMs;
    if (action.queue) fired.queue = action.queue;
    return fired;
  };
  if (isOverlayAction(action)) {
    const render = compilePayload(action.payload);
    const { overlayId, widgetId, command } = action;
    return (context) =>
      waits({
        ruleId,
        ruleName,
        index,
        kind: 'overlay',
        overlayId,
        widgetId,
        command,
        payload: capped(asPayload(render(context))),
      });
  }
  if (action.kind === 'webhook') {
    // Placeholders in the URL are percent-encoded for the part they stand in; in a text body that reads
    // as JSON they are escaped as the inside of a JSON string.
    const renderUrl = compileUrlTemplate(action.url);
    const origin = new URL(action.url).origin;
    const body = action.body;
    const renderBody =
      typeof body === 'string' && looksLikeJson(body)
        ? compileTemplate(body, jsonStringEscape)
        : compilePayload(body);
    const render = compilePayload({ headers: action.headers ?? {} });
    const method = action.method ?? 'POST';
    return (context) => {
      const url = renderUrl(context);
      const rendered = asPayload(asPayload(render(context)).headers);
      const out = capped({ url, headers: rendered, body: renderBody(context) });
      const headers: Record<string, string> = {};
      for (const key in rendered) headers[key] = String(rendered[key]);
      return waits({
        ruleId,
        ruleName,
        index,
        kind: 'webhook',
        url,
        origin,
        method,
        headers,
        body: out.body,
      });
    };
  }
  if (action.kind === 'obs') {
    const render = compilePayload(action.params);
    const { request, revertAfterMs } = action;
    return (context) => {
      const fired: FiredAction = {
        ruleId,
        ruleName,
        index,
        kind: 'obs',
        request,
        params: capped(asPayload(render(context))),
      };
      if (revertAfterMs) fired.revertAfterMs = revertAfterMs;
      return waits(fired);
    };
  }
  if (action.kind === 'speak') {
    const render = compilePayload({ text: action.text });
    const { overlayId, voice, rate, volume } = action;
    return (context) => {
      const fired: FiredAction & { kind: 'speak' } = {
        ruleId,
        ruleName,
        index,
        kind: 'speak',
        text: String(capped(asPayload(render(context))).text ?? ''),
        overlayId,
        sender: String((context.user as { uniqueId?: unknown } | undefined)?.uniqueId ?? ''),
      };
      if (voice) fired.voice = voice;
      if (rate !== undefined) fired.rate = rate;
      if (volume !== undefined) fired.volume = volume;
      return waits(fired);
    };
  }
  if (action.kind === 'chat') {
    const render = compilePayload({ text: action.text });
    const platform = action.platform ?? 'same';
    return (context, event) =>
      waits({
        ruleId,
        ruleName,
        index,
        kind: 'chat',
        text: String(capped(asPayload(render(context))).text ?? ''),
        platform,
        from: event.platform,
      });
  }
  const render = compilePayload({ action: action.action, args: action.args ?? {} });
  return (context) => {
    const out = capped(asPayload(render(context)));
    return waits({
      ruleId,
      ruleName,
      index,
      kind: 'streamerbot',
      action: String(out.action ?? ''),
      args: asPayload(out.args),
    });
  };
}

/** A rendered payload (always a fresh plain object from compilePayload), or {} for anything else. */
function asPayload(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return value as Record<string, unknown>;
}
