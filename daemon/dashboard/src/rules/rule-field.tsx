// A field of the rules form: its id and message come from its path in the rule list ("0.actions.1.command").
import type { ComponentChildren } from 'preact';
import { Field, type FieldA11y } from '../fields.js';

/** Where a rule's fields live: the id prefix of its controls and the message of a path inside it. */
export interface RuleFields {
  prefix: string;
  error: (sub: string) => string | undefined;
}

export function RuleField(props: {
  fields: RuleFields;
  sub: string;
  label: string;
  children: (a11y: FieldA11y) => ComponentChildren;
}) {
  const { fields, sub } = props;
  return (
    <Field id={`${fields.prefix}-${sub.replace(/\./g, '-')}`} label={props.label} error={fields.error(sub)}>
      {props.children}
    </Field>
  );
}
