// A `streamerbot` action's form: the Streamer.bot action's name and its arguments.
import type { RuleAction } from '../../../../../shared/rules.js';
import { type KindProps, LinesField, TextInput, withKey } from './inputs.js';

type Streamerbot = Extract<RuleAction, { kind: 'streamerbot' }>;

export function StreamerbotFields(props: KindProps<Streamerbot>) {
  const { fields, base, action, onChange } = props;
  return (
    <>
      <TextInput
        fields={fields}
        sub={`${base}.action`}
        label="Streamer.bot action name"
        value={action.action}
        set={(name) => onChange({ ...action, action: name })}
      />
      <LinesField
        fields={fields}
        sub={`${base}.args`}
        label="Arguments (one “name: value” per line, templates allowed)"
        value={action.args}
        set={(args) => onChange(withKey(action, 'args', args))}
      />
    </>
  );
}
