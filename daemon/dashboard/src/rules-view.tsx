// Rules: list, create, edit, reorder, delete; validated with RuleList before PUT /api/rules.
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import {
  KNOWN_COMMANDS,
  type Overlay,
  parseWith,
  STREAM_EVENT_TYPES,
} from '../../../shared/protocol/index.js';
import { type Rule, type RuleAction, type RuleConditions, RuleList } from '../../../shared/rules.js';
import { ApiError } from './api.js';
import type { Shared } from './app.js';
import { fieldIssues } from './field-issues.js';
import { isAudio, isImage } from './media-kinds.js';
import { describeError, FieldError, Notice } from './ui.js';

const CONDITIONS: Record<Rule['trigger'], readonly (keyof RuleConditions)[]> = {
  gift: ['giftName', 'minRepeatCount', 'minDiamonds', 'userId'],
  like: ['minLikes', 'userId'],
  chat: ['chatIncludes', 'userId'],
  follow: ['userId'],
  share: ['userId'],
  subscribe: ['userId'],
  viewer: ['userId'],
};
const CONDITION_LABELS: Record<keyof RuleConditions, string> = {
  giftName: 'Gift name is',
  minRepeatCount: 'At least this many gifts in one go',
  minDiamonds: 'At least this many diamonds (diamonds × count)',
  minLikes: 'At least this many likes in one event',
  chatIncludes: 'Chat message contains',
  userId: 'Only from user (uniqueId)',
};
const NUMERIC_CONDITIONS = new Set<keyof RuleConditions>(['minRepeatCount', 'minDiamonds', 'minLikes']);
const DEFAULT_ALERT_TEXT = '{user.nickname} sent {data.repeatCount} × {data.giftName}';

const randomId = () => `rule-${Math.random().toString(36).slice(2, 8)}`;

function newAction(overlays: Overlay[]): RuleAction {
  const overlay = overlays[0];
  const widget = overlay?.widgets.find((w) => w.type === 'alert') ?? overlay?.widgets[0];
  return {
    overlayId: overlay?.id ?? '',
    widgetId: widget?.id ?? '',
    command: 'show-alert',
    payload: { text: DEFAULT_ALERT_TEXT, duration: 5000 },
  };
}

function newRule(overlays: Overlay[], taken: Set<string>): Rule {
  let id = randomId();
  while (taken.has(id)) id = randomId();
  return {
    id,
    name: 'New rule',
    enabled: true,
    trigger: 'gift',
    conditions: {},
    cooldownMs: 0,
    actions: [newAction(overlays)],
  };
}

const toNumber = (text: string) => (text.trim() === '' ? Number.NaN : Number(text));

interface Ctx {
  prefix: string;
  error: (sub: string) => string | undefined;
}

/** A labelled control with its message; ids derive from the field path so tests and readers can find them. */
function Labelled(props: {
  ctx: Ctx;
  sub: string;
  label: string;
  render: (a: { id: string; 'aria-invalid'?: 'true'; 'aria-describedby': string }) => ComponentChildren;
}) {
  const id = `${props.ctx.prefix}-${props.sub.replace(/\./g, '-')}`;
  const message = props.ctx.error(props.sub);
  return (
    <div class={`field${message ? ' invalid' : ''}`}>
      <label for={id}>{props.label}</label>
      {props.render({
        id,
        ...(message ? { 'aria-invalid': 'true' as const } : {}),
        'aria-describedby': `${id}-error`,
      })}
      <FieldError id={`${id}-error`} message={message} />
    </div>
  );
}

function ActionEditor(props: {
  ctx: Ctx;
  index: number;
  action: RuleAction;
  shared: Shared;
  onChange: (a: RuleAction) => void;
  onRemove?: () => void;
}) {
  const { ctx, action, shared, onChange } = props;
  const base = `actions.${props.index}`;
  const overlay = shared.overlays.find((o) => o.id === action.overlayId);
  const payload = action.payload;
  const setPayload = (key: string, value: unknown) => {
    const next = { ...payload };
    if (value === undefined) delete next[key];
    else next[key] = value;
    onChange({ ...action, payload: next });
  };
  const known = KNOWN_COMMANDS.some((c) => c === action.command);
  const [json, setJson] = useState(() => JSON.stringify(payload, null, 2));
  const [jsonError, setJsonError] = useState<string | undefined>();
  const str = (key: string) => (typeof payload[key] === 'string' ? String(payload[key]) : '');
  const numText = (key: string) => (typeof payload[key] === 'number' ? String(payload[key]) : '');
  const mediaOptions = (filter: (n: string) => boolean, key: string, label: string, optional: boolean) => (
    <Labelled
      ctx={ctx}
      sub={`${base}.payload.${key}`}
      label={label}
      render={(a) => (
        <select {...a} value={str(key)} onChange={(e) => setPayload(key, e.currentTarget.value || undefined)}>
          {optional ? <option value="">None</option> : <option value="">Choose…</option>}
          {shared.media
            .filter((m) => filter(m.name))
            .map((m) => (
              <option key={m.name} value={m.name}>
                {m.name}
              </option>
            ))}
        </select>
      )}
    />
  );

  return (
    <fieldset class="action">
      <legend>Action {props.index + 1}</legend>
      <Labelled
        ctx={ctx}
        sub={`${base}.overlayId`}
        label="Overlay"
        render={(a) => (
          <select
            {...a}
            value={action.overlayId}
            onChange={(e) => {
              const next = shared.overlays.find((o) => o.id === e.currentTarget.value);
              const widget = next?.widgets.find((w) => w.type === 'alert') ?? next?.widgets[0];
              onChange({ ...action, overlayId: e.currentTarget.value, widgetId: widget?.id ?? '' });
            }}
          >
            <option value="">Choose an overlay…</option>
            {shared.overlays.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
        )}
      />
      <Labelled
        ctx={ctx}
        sub={`${base}.widgetId`}
        label="Widget"
        render={(a) => (
          <select
            {...a}
            value={action.widgetId}
            onChange={(e) => onChange({ ...action, widgetId: e.currentTarget.value })}
          >
            <option value="">Choose a widget…</option>
            {action.widgetId && !overlay?.widgets.some((w) => w.id === action.widgetId) && (
              <option value={action.widgetId}>{action.widgetId} (not on this overlay)</option>
            )}
            {overlay?.widgets.map((w) => (
              <option key={w.id} value={w.id}>
                {w.type} · {w.id}
              </option>
            ))}
          </select>
        )}
      />
      <Labelled
        ctx={ctx}
        sub={`${base}.command`}
        label="Command"
        render={(a) => (
          <select
            {...a}
            value={known ? action.command : 'custom'}
            onChange={(e) => {
              const command = e.currentTarget.value;
              const nextPayload: Record<string, unknown> =
                command === 'show-alert'
                  ? { text: DEFAULT_ALERT_TEXT, duration: 5000 }
                  : command === 'set-text'
                    ? { text: '{user.nickname}' }
                    : {};
              onChange({
                ...action,
                command: command === 'custom' ? 'my-command' : command,
                payload: nextPayload,
              });
              setJson(JSON.stringify(nextPayload, null, 2));
            }}
          >
            {KNOWN_COMMANDS.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
            <option value="custom">custom…</option>
          </select>
        )}
      />
      {action.command === 'show-alert' && (
        <>
          <Labelled
            ctx={ctx}
            sub={`${base}.payload.text`}
            label="Alert text ({user.nickname}, {data.giftName}, {data.repeatCount} … are filled in)"
            render={(a) => (
              <input {...a} value={str('text')} onInput={(e) => setPayload('text', e.currentTarget.value)} />
            )}
          />
          <Labelled
            ctx={ctx}
            sub={`${base}.payload.duration`}
            label="Duration (ms)"
            render={(a) => (
              <input
                {...a}
                type="number"
                min={100}
                max={60000}
                step={100}
                value={numText('duration')}
                onInput={(e) => setPayload('duration', toNumber(e.currentTarget.value))}
              />
            )}
          />
          {mediaOptions(isImage, 'image', 'Image', true)}
          {mediaOptions(isAudio, 'sound', 'Sound', true)}
        </>
      )}
      {action.command === 'play-sound' && (
        <>
          {mediaOptions(isAudio, 'sound', 'Sound', false)}
          <Labelled
            ctx={ctx}
            sub={`${base}.payload.volume`}
            label="Volume (0–1)"
            render={(a) => (
              <input
                {...a}
                type="number"
                min={0}
                max={1}
                step={0.05}
                value={numText('volume')}
                onInput={(e) =>
                  setPayload(
                    'volume',
                    e.currentTarget.value === '' ? undefined : toNumber(e.currentTarget.value),
                  )
                }
              />
            )}
          />
        </>
      )}
      {action.command === 'set-text' && (
        <Labelled
          ctx={ctx}
          sub={`${base}.payload.text`}
          label="New text (templates allowed)"
          render={(a) => (
            <input {...a} value={str('text')} onInput={(e) => setPayload('text', e.currentTarget.value)} />
          )}
        />
      )}
      {!known && (
        <>
          <Labelled
            ctx={ctx}
            sub={`${base}.command`}
            label="Custom command name"
            render={(a) => (
              <input
                {...a}
                value={action.command}
                onInput={(e) => onChange({ ...action, command: e.currentTarget.value })}
              />
            )}
          />
          <div class={`field${jsonError ? ' invalid' : ''}`}>
            <label for={`${ctx.prefix}-${base}-json`}>Payload (JSON object)</label>
            <textarea
              id={`${ctx.prefix}-${base}-json`}
              rows={4}
              value={json}
              aria-invalid={jsonError ? 'true' : undefined}
              onInput={(e) => {
                const text = e.currentTarget.value;
                setJson(text);
                try {
                  const parsed: unknown = JSON.parse(text || '{}');
                  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
                    throw new Error('must be a JSON object');
                  }
                  setJsonError(undefined);
                  onChange({ ...action, payload: Object.fromEntries(Object.entries(parsed)) });
                } catch (err) {
                  setJsonError(err instanceof Error ? err.message : 'not JSON');
                }
              }}
            />
            <FieldError id={`${ctx.prefix}-${base}-json-error`} message={jsonError} />
          </div>
        </>
      )}
      {props.onRemove && (
        <button type="button" class="quiet" onClick={props.onRemove}>
          Remove action
        </button>
      )}
    </fieldset>
  );
}

function RuleEditor(props: {
  rule: Rule;
  index: number;
  count: number;
  shared: Shared;
  error: (sub: string) => string | undefined;
  onChange: (r: Rule) => void;
  onMove: (delta: number) => void;
  onRemove: () => void;
}) {
  const { rule, shared, onChange } = props;
  const ctx: Ctx = { prefix: `rule-${props.index}`, error: props.error };
  const setCondition = (key: keyof RuleConditions, value: string | number | undefined) => {
    const next: Record<string, unknown> = { ...rule.conditions };
    if (value === undefined || value === '') delete next[key];
    else next[key] = value;
    onChange({ ...rule, conditions: rawConditions(next) });
  };
  return (
    <li class="card rule" data-rule-id={rule.id}>
      <div class="card-head">
        <h3>
          {props.index + 1}. {rule.name || rule.id}
        </h3>
        <div class="row">
          <button
            type="button"
            onClick={() => props.onMove(-1)}
            disabled={props.index === 0}
            aria-label={`Move ${rule.name || rule.id} up`}
          >
            ↑ Up
          </button>
          <button
            type="button"
            onClick={() => props.onMove(1)}
            disabled={props.index === props.count - 1}
            aria-label={`Move ${rule.name || rule.id} down`}
          >
            ↓ Down
          </button>
          <button type="button" class="danger" onClick={props.onRemove}>
            Delete rule
          </button>
        </div>
      </div>
      <div class="grid">
        <Labelled
          ctx={ctx}
          sub="name"
          label="Name"
          render={(a) => (
            <input
              {...a}
              value={rule.name}
              onInput={(e) => onChange({ ...rule, name: e.currentTarget.value })}
            />
          )}
        />
        <Labelled
          ctx={ctx}
          sub="trigger"
          label="When"
          render={(a) => (
            <select
              {...a}
              value={rule.trigger}
              onChange={(e) => {
                const trigger = STREAM_EVENT_TYPES.find((t) => t === e.currentTarget.value);
                if (!trigger) return;
                // Conditions that cannot apply to the new trigger are dropped rather than silently never matching.
                const kept = Object.fromEntries(
                  Object.entries(rule.conditions).filter(([k]) => CONDITIONS[trigger].some((c) => c === k)),
                );
                onChange({ ...rule, trigger, conditions: kept });
              }}
            >
              {STREAM_EVENT_TYPES.map((t) => (
                <option key={t} value={t}>
                  a {t} event arrives
                </option>
              ))}
            </select>
          )}
        />
        <Labelled
          ctx={ctx}
          sub="cooldownMs"
          label="Cooldown (ms)"
          render={(a) => (
            <input
              {...a}
              type="number"
              min={0}
              step={100}
              value={Number.isNaN(rule.cooldownMs) ? '' : String(rule.cooldownMs)}
              onInput={(e) => onChange({ ...rule, cooldownMs: toNumber(e.currentTarget.value) })}
            />
          )}
        />
        <div class="field">
          <label class="check">
            <input
              type="checkbox"
              checked={rule.enabled}
              onChange={(e) => onChange({ ...rule, enabled: e.currentTarget.checked })}
            />
            Enabled
          </label>
        </div>
      </div>
      <fieldset class="conditions">
        <legend>Only if</legend>
        {CONDITIONS[rule.trigger].map((key) => {
          const value = rule.conditions[key];
          const numeric = NUMERIC_CONDITIONS.has(key);
          return (
            <Labelled
              key={key}
              ctx={ctx}
              sub={`conditions.${key}`}
              label={CONDITION_LABELS[key]}
              render={(a) => (
                <input
                  {...a}
                  type={numeric ? 'number' : 'text'}
                  min={numeric ? 1 : undefined}
                  placeholder="any"
                  value={value === undefined || Number.isNaN(value) ? '' : String(value)}
                  onInput={(e) => {
                    const text = e.currentTarget.value;
                    setCondition(key, numeric ? (text === '' ? undefined : toNumber(text)) : text);
                  }}
                />
              )}
            />
          );
        })}
      </fieldset>
      <FieldError id={`${ctx.prefix}-actions-error`} message={props.error('actions')} />
      {rule.actions.map((action, i) => (
        <ActionEditor
          key={i}
          ctx={ctx}
          index={i}
          action={action}
          shared={shared}
          onChange={(a) => onChange({ ...rule, actions: rule.actions.map((x, j) => (j === i ? a : x)) })}
          {...(rule.actions.length > 1
            ? { onRemove: () => onChange({ ...rule, actions: rule.actions.filter((_, j) => j !== i) }) }
            : {})}
        />
      ))}
      <button
        type="button"
        onClick={() => onChange({ ...rule, actions: [...rule.actions, newAction(shared.overlays)] })}
      >
        + Add action
      </button>
    </li>
  );
}

/** Conditions as typed, even when a value is not yet valid (the schema's message then shows beside it). */
function rawConditions(record: Record<string, unknown>): RuleConditions {
  const out: RuleConditions = {};
  for (const [key, value] of Object.entries(record)) {
    if ((key === 'giftName' || key === 'chatIncludes' || key === 'userId') && typeof value === 'string')
      out[key] = value;
    if (
      (key === 'minRepeatCount' || key === 'minDiamonds' || key === 'minLikes') &&
      typeof value === 'number'
    ) {
      out[key] = value;
    }
  }
  return out;
}

export function RulesView(props: { shared: Shared }) {
  const { shared } = props;
  const [draft, setDraft] = useState<Rule[]>(shared.rules);
  const [serverError, setServerError] = useState<ApiError | undefined>();
  const [note, setNote] = useState<{ kind: 'ok' | 'error'; text: string } | undefined>();

  useEffect(() => setDraft(shared.rules), [shared.rules]);

  const issues = useMemo(() => fieldIssues(RuleList, draft), [draft]);
  const dirty = JSON.stringify(draft) !== JSON.stringify(shared.rules);

  const errorOf = (index: number) => (sub: string) => {
    if (serverError?.field === `${index}.${sub}`) return serverError.message.replace(/^[^:]+: /, '');
    return issues.get(`${index}.${sub}`);
  };

  const save = async () => {
    setServerError(undefined);
    // Same schema as the daemon: a list it would refuse is not sent.
    const parsed = parseWith(RuleList, draft);
    if (!parsed.ok) {
      setNote({ kind: 'error', text: `Not saved: ${parsed.error}` });
      return;
    }
    try {
      await shared.api.saveRules(parsed.value);
      await shared.reloadRules();
      setNote({
        kind: 'ok',
        text: `Saved ${parsed.value.length} rule${parsed.value.length === 1 ? '' : 's'}.`,
      });
    } catch (err) {
      if (err instanceof ApiError) setServerError(err);
      setNote({ kind: 'error', text: `The daemon refused the rules: ${describeError(err)}` });
    }
  };

  const move = (index: number, delta: number) =>
    setDraft((list) => {
      const to = index + delta;
      if (to < 0 || to >= list.length) return list;
      const next = [...list];
      const [rule] = next.splice(index, 1);
      if (rule) next.splice(to, 0, rule);
      return next;
    });

  return (
    <section aria-labelledby="rules-title">
      <div class="section-head">
        <h2 id="rules-title">Rules</h2>
        <button
          type="button"
          onClick={() =>
            setDraft((list) => [...list, newRule(shared.overlays, new Set(list.map((r) => r.id)))])
          }
        >
          New rule
        </button>
        <button type="button" class="primary" onClick={() => void save()} disabled={!dirty}>
          Save rules
        </button>
        {dirty && (
          <button type="button" class="quiet" onClick={() => setDraft(shared.rules)}>
            Discard changes
          </button>
        )}
      </div>
      <p class="muted">
        Rules run in this order on every event. Each matching rule sends its actions to a widget of an
        overlay.
      </p>
      {note && <Notice kind={note.kind}>{note.text}</Notice>}
      {issues.get('') && <Notice kind="error">{issues.get('')}</Notice>}
      {draft.length === 0 && <Notice kind="info">No rules yet.</Notice>}
      <ul class="cards">
        {draft.map((rule, i) => (
          <RuleEditor
            key={rule.id}
            rule={rule}
            index={i}
            count={draft.length}
            shared={shared}
            error={errorOf(i)}
            onChange={(r) => {
              setServerError(undefined);
              setDraft((list) => list.map((x, j) => (j === i ? r : x)));
            }}
            onMove={(d) => move(i, d)}
            onRemove={() => setDraft((list) => list.filter((_, j) => j !== i))}
          />
        ))}
      </ul>
    </section>
  );
}
