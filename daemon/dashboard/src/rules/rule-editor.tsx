// One rule of the list: its name, trigger, cooldown and conditions, its actions, and its place in the order.
import { PLATFORMS, STREAM_EVENT_TYPES } from '../../../../shared/protocol/index.js';
import type { Rule, RuleConditions } from '../../../../shared/rules.js';
import { numberFromText, numberText, optionalNumberFromText } from '../fields.js';
import type { Shared } from '../shared-data.js';
import { FieldError } from '../ui.js';
import { ActionCard } from './action-card.js';
import { newAction } from './new-rule.js';
import { RuleField, type RuleFields } from './rule-field.js';
import { RuleTest } from './rule-test.js';

/** The conditions that apply to each trigger (the engine ignores the others). */
const CONDITIONS: Record<Rule['trigger'], readonly (keyof RuleConditions)[]> = {
  gift: ['giftName', 'minRepeatCount', 'minDiamonds', 'userId', 'platform'],
  like: ['minLikes', 'everyLikes', 'userId', 'platform'],
  chat: ['command', 'chatIncludes', 'userId', 'platform'],
  follow: ['userId', 'platform'],
  share: ['userId', 'platform'],
  subscribe: ['userId', 'platform'],
  viewer: ['userId', 'platform'],
};
const CONDITION_LABELS: Record<keyof RuleConditions, string> = {
  giftName: 'Gift name is',
  minRepeatCount: 'At least this many gifts in one go',
  minDiamonds:
    'At least this much gift value (diamonds on TikTok, bits on Twitch, cents on YouTube, Kicks on Kick)',
  minLikes: 'At least this many likes in one event',
  chatIncludes: 'Chat message contains',
  userId: 'Only from user (uniqueId)',
  command: 'Chat command (first word, e.g. !dance)',
  everyLikes: 'Every this many likes in the room',
  platform: 'Only from platform',
};
const NUMERIC_CONDITIONS = new Set<keyof RuleConditions>([
  'minRepeatCount',
  'minDiamonds',
  'minLikes',
  'everyLikes',
]);

/** Conditions as typed, even when a value is not yet valid (the schema's message then shows beside it). */
function rawConditions(record: Record<string, unknown>): RuleConditions {
  const out: RuleConditions = {};
  for (const [key, value] of Object.entries(record)) {
    if (
      (key === 'giftName' || key === 'chatIncludes' || key === 'userId' || key === 'command') &&
      typeof value === 'string'
    )
      out[key] = value;
    if (
      (key === 'minRepeatCount' || key === 'minDiamonds' || key === 'minLikes' || key === 'everyLikes') &&
      typeof value === 'number'
    ) {
      out[key] = value;
    }
    if (key === 'platform') {
      const platform = PLATFORMS.find((p) => p === value);
      if (platform) out.platform = platform;
    }
  }
  return out;
}

function Conditions(props: { rule: Rule; fields: RuleFields; onChange: (r: Rule) => void }) {
  const { rule, fields } = props;
  const setCondition = (key: keyof RuleConditions, value: string | number | undefined) => {
    const next: Record<string, unknown> = { ...rule.conditions };
    if (value === undefined || value === '') delete next[key];
    else next[key] = value;
    props.onChange({ ...rule, conditions: rawConditions(next) });
  };
  return (
    <fieldset class="conditions">
      <legend>Only if</legend>
      {CONDITIONS[rule.trigger].map((key) => {
        const numeric = NUMERIC_CONDITIONS.has(key);
        const value = rule.conditions[key];
        if (key === 'platform')
          return (
            <RuleField key={key} fields={fields} sub="conditions.platform" label={CONDITION_LABELS[key]}>
              {(a11y) => (
                <select
                  {...a11y}
                  value={rule.conditions.platform ?? ''}
                  onChange={(e) => setCondition('platform', e.currentTarget.value)}
                >
                  <option value="">any</option>
                  {PLATFORMS.map((p) => (
                    <option key={p} value={p}>
                      {p}
                    </option>
                  ))}
                </select>
              )}
            </RuleField>
          );
        return (
          <RuleField key={key} fields={fields} sub={`conditions.${key}`} label={CONDITION_LABELS[key]}>
            {(a11y) => (
              <input
                {...a11y}
                type={numeric ? 'number' : 'text'}
                min={numeric ? 1 : undefined}
                placeholder="any"
                value={typeof value === 'number' ? numberText(value) : (value ?? '')}
                onInput={(e) => {
                  const text = e.currentTarget.value;
                  setCondition(key, numeric ? (text === '' ? undefined : numberFromText(text)) : text);
                }}
              />
            )}
          </RuleField>
        );
      })}
    </fieldset>
  );
}

/** Moves the rule up or down the order (rules run in order), and deletes it. */
function RuleControls(props: {
  name: string;
  index: number;
  count: number;
  onMove: (delta: number) => void;
  onRemove: () => void;
}) {
  return (
    <div class="row">
      <button
        type="button"
        onClick={() => props.onMove(-1)}
        disabled={props.index === 0}
        aria-label={`Move ${props.name} up`}
      >
        ↑ Up
      </button>
      <button
        type="button"
        onClick={() => props.onMove(1)}
        disabled={props.index === props.count - 1}
        aria-label={`Move ${props.name} down`}
      >
        ↓ Down
      </button>
      <button type="button" class="danger" onClick={props.onRemove}>
        Delete rule
      </button>
    </div>
  );
}

export function RuleEditor(props: {
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
  const fields: RuleFields = { prefix: `rule-${props.index}`, error: props.error };
  const name = rule.name || rule.id;
  return (
    <li class="card rule" data-rule-id={rule.id}>
      <div class="card-head">
        <h3>
          {props.index + 1}. {name}
        </h3>
        <RuleControls
          name={name}
          index={props.index}
          count={props.count}
          onMove={props.onMove}
          onRemove={props.onRemove}
        />
      </div>
      <div class="grid">
        <RuleField fields={fields} sub="name" label="Name">
          {(a11y) => (
            <input
              {...a11y}
              value={rule.name}
              onInput={(e) => onChange({ ...rule, name: e.currentTarget.value })}
            />
          )}
        </RuleField>
        <RuleField fields={fields} sub="trigger" label="When">
          {(a11y) => (
            <select
              {...a11y}
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
        </RuleField>
        <RuleField fields={fields} sub="cooldownMs" label="Cooldown (ms)">
          {(a11y) => (
            <input
              {...a11y}
              type="number"
              min={0}
              step={100}
              value={numberText(rule.cooldownMs)}
              onInput={(e) => onChange({ ...rule, cooldownMs: numberFromText(e.currentTarget.value) })}
            />
          )}
        </RuleField>
        <RuleField fields={fields} sub="userCooldownMs" label="Per-viewer cooldown (ms)">
          {(a11y) => (
            <input
              {...a11y}
              type="number"
              min={0}
              step={1000}
              placeholder="none"
              value={numberText(rule.userCooldownMs)}
              onInput={(e) => {
                const { userCooldownMs: _, ...rest } = rule;
                const ms = optionalNumberFromText(e.currentTarget.value);
                onChange(ms === undefined ? rest : { ...rest, userCooldownMs: ms });
              }}
            />
          )}
        </RuleField>
        {rule.trigger === 'gift' && (
          <div class="field">
            <label class="check">
              <input
                type="checkbox"
                checked={rule.perUnit === true}
                onChange={(e) => {
                  const { perUnit: _, ...rest } = rule;
                  onChange(e.currentTarget.checked ? { ...rest, perUnit: true } : rest);
                }}
              />
              Once per gift of a streak (at most 100)
            </label>
          </div>
        )}
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
      <Conditions rule={rule} fields={fields} onChange={onChange} />
      <FieldError id={`${fields.prefix}-actions-error`} message={props.error('actions')} />
      {rule.actions.map((action, i) => {
        const remove =
          rule.actions.length > 1
            ? { onRemove: () => onChange({ ...rule, actions: rule.actions.filter((_, j) => j !== i) }) }
            : {};
        return (
          <ActionCard
            key={i}
            fields={fields}
            trigger={rule.trigger}
            index={i}
            action={action}
            shared={shared}
            onChange={(a) => onChange({ ...rule, actions: rule.actions.map((x, j) => (j === i ? a : x)) })}
            {...remove}
          />
        );
      })}
      <div class="row">
        <button
          type="button"
          onClick={() => onChange({ ...rule, actions: [...rule.actions, newAction(shared.overlays)] })}
          disabled={rule.actions.length >= 10}
        >
          + Add action
        </button>
        <RuleTest rule={rule} shared={shared} />
      </div>
    </li>
  );
}
