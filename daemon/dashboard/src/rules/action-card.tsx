// One action of a rule, of any kind: its kind, the form of that kind (kinds/, one file per kind), the wait
// before it and its queue.
import type { StreamEventType } from '../../../../shared/protocol/index.js';
import { ACTION_KINDS, type ActionKind, type RuleAction } from '../../../../shared/rules.js';
import type { Shared } from '../shared-data.js';
import { KIND_LABELS, KindFields } from './kinds/index.js';
import { OptionalNumber, TextInput, withKey } from './kinds/inputs.js';
import { startingAction } from './new-rule.js';
import { RuleField, type RuleFields } from './rule-field.js';

export function ActionCard(props: {
  fields: RuleFields;
  trigger: StreamEventType;
  index: number;
  action: RuleAction;
  shared: Shared;
  onChange: (a: RuleAction) => void;
  onRemove?: () => void;
}) {
  const { fields, action, shared, onChange } = props;
  const base = `actions.${props.index}`;
  const kind: ActionKind = action.kind ?? 'overlay';
  return (
    <fieldset class="action" data-action-kind={kind}>
      <legend>Action {props.index + 1}</legend>
      <RuleField fields={fields} sub={`${base}.kind`} label="Does">
        {(a11y) => (
          <select
            {...a11y}
            value={kind}
            onChange={(e) => {
              const next = ACTION_KINDS.find((k) => k === e.currentTarget.value);
              if (!next || next === kind) return;
              const { delayMs, queue } = action;
              onChange({
                ...startingAction(next, shared.overlays, props.trigger),
                ...(delayMs !== undefined ? { delayMs } : {}),
                ...(queue !== undefined ? { queue } : {}),
              });
            }}
          >
            {ACTION_KINDS.map((k) => (
              <option key={k} value={k}>
                {KIND_LABELS[k]}
              </option>
            ))}
          </select>
        )}
      </RuleField>
      <KindFields
        fields={fields}
        trigger={props.trigger}
        index={props.index}
        action={action}
        shared={shared}
        onChange={onChange}
      />
      <div class="grid">
        <OptionalNumber
          fields={fields}
          sub={`${base}.delayMs`}
          label="Wait before it (ms)"
          placeholder="0"
          value={action.delayMs}
          set={(ms) => onChange(withKey(action, 'delayMs', ms))}
          min={0}
          max={60000}
          step={100}
        />
        <TextInput
          fields={fields}
          sub={`${base}.queue`}
          label="Queue (actions of one queue run one at a time)"
          placeholder="none: runs at once"
          value={action.queue ?? ''}
          set={(q) => onChange(withKey(action, 'queue', q === '' ? undefined : q))}
        />
      </div>
      {props.onRemove && (
        <button type="button" class="quiet" onClick={props.onRemove}>
          Remove action
        </button>
      )}
    </fieldset>
  );
}
