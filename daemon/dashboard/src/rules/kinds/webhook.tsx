// A `webhook` action's form: the address, the method, headers and the body (JSON sent as JSON, anything
// else as text).
import { useState } from 'preact/hooks';
import type { RuleAction } from '../../../../../shared/rules.js';
import { FieldError } from '../../ui.js';
import { RuleField } from '../rule-field.js';
import { type KindProps, LinesField, TextInput, withKey } from './inputs.js';

type Webhook = Extract<RuleAction, { kind: 'webhook' }>;

export function WebhookFields(props: KindProps<Webhook>) {
  const { fields, base, action, onChange } = props;
  const [body, setBody] = useState(() =>
    action.body === undefined
      ? ''
      : typeof action.body === 'string'
        ? action.body
        : JSON.stringify(action.body, null, 2),
  );
  const bodyId = `${fields.prefix}-${base.replace(/\./g, '-')}-body`;
  return (
    <>
      <TextInput
        fields={fields}
        sub={`${base}.url`}
        label="Address (http or https)"
        placeholder="http://127.0.0.1:8080/hook"
        value={action.url}
        set={(url) => onChange({ ...action, url })}
      />
      <RuleField fields={fields} sub={`${base}.method`} label="Method">
        {(a11y) => (
          <select
            {...a11y}
            value={action.method ?? 'POST'}
            onChange={(e) => {
              const method = (['POST', 'GET', 'PUT'] as const).find((m) => m === e.currentTarget.value);
              onChange({ ...action, method });
            }}
          >
            <option value="POST">POST</option>
            <option value="GET">GET</option>
            <option value="PUT">PUT</option>
          </select>
        )}
      </RuleField>
      <LinesField
        fields={fields}
        sub={`${base}.headers`}
        label="Headers (one “Name: value” per line)"
        value={action.headers}
        set={(headers) => onChange(withKey(action, 'headers', headers))}
      />
      {action.method !== 'GET' && (
        <div class="field">
          <label for={bodyId}>Body: JSON is sent as JSON, anything else as text (templates allowed)</label>
          <textarea
            id={bodyId}
            rows={4}
            value={body}
            onInput={(e) => {
              const typed = e.currentTarget.value;
              setBody(typed);
              let parsed: unknown = typed;
              try {
                parsed = typed.trim() === '' ? undefined : JSON.parse(typed);
              } catch {
                // Not JSON (yet): sent as the text it is.
              }
              onChange(withKey(action, 'body', parsed));
            }}
          />
          <FieldError id={`${bodyId}-error`} message={fields.error(`${base}.body`)} />
        </div>
      )}
    </>
  );
}
