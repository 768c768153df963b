// What the forms of the action kinds share: the props each gets, a number or text input with its
// message, "name: value" lines, and the placeholders an event of each trigger fills in.
import { useState } from 'preact/hooks';
import type { StreamEventType } from '../../../../../shared/protocol/index.js';
import type { RuleAction } from '../../../../../shared/rules.js';
import { numberText, optionalNumberFromText } from '../../fields.js';
import { RuleField, type RuleFields } from '../rule-field.js';

/** What every kind's form gets: the rule's fields, its action's path in them, the action and its change. */
export interface KindProps<A> {
  fields: RuleFields;
  base: string;
  action: A;
  onChange: (a: RuleAction) => void;
}

/** An optional number input; empty removes the field. */
export function OptionalNumber(props: {
  fields: RuleFields;
  sub: string;
  label: string;
  value: number | undefined;
  set: (v: number | undefined) => void;
  min: number;
  max: number;
  step: number;
  placeholder?: string;
}) {
  return (
    <RuleField fields={props.fields} sub={props.sub} label={props.label}>
      {(a11y) => (
        <input
          {...a11y}
          type="number"
          min={props.min}
          max={props.max}
          step={props.step}
          placeholder={props.placeholder}
          value={numberText(props.value)}
          onInput={(e) => props.set(optionalNumberFromText(e.currentTarget.value))}
        />
      )}
    </RuleField>
  );
}

/** A text input; its message beside it. */
export function TextInput(props: {
  fields: RuleFields;
  sub: string;
  label: string;
  value: string;
  set: (v: string) => void;
  placeholder?: string;
}) {
  return (
    <RuleField fields={props.fields} sub={props.sub} label={props.label}>
      {(a11y) => (
        <input
          {...a11y}
          value={props.value}
          placeholder={props.placeholder}
          onInput={(e) => props.set(e.currentTarget.value)}
        />
      )}
    </RuleField>
  );
}

/** Sets or (for undefined) removes one field of an action. */
export function withKey<A extends object, K extends keyof A>(a: A, key: K, value: A[K] | undefined): A {
  const next = { ...a };
  if (value === undefined) delete next[key];
  else next[key] = value;
  return next;
}

/** The placeholders an event of each trigger fills in, for the hint beside a text to say. */
export const SPEAK_PLACEHOLDERS: Record<StreamEventType, string> = {
  gift: '{user.nickname}, {data.giftName}, {data.repeatCount}',
  chat: '{user.nickname}, {data.comment}',
  like: '{user.nickname}, {data.likeCount}',
  follow: '{user.nickname}',
  share: '{user.nickname}',
  subscribe: '{user.nickname}',
  viewer: '{data.viewerCount}',
};

/** "Name: value" lines for a record of strings (headers, Streamer.bot arguments). */
export function LinesField(props: {
  fields: RuleFields;
  sub: string;
  label: string;
  value: Record<string, unknown> | undefined;
  set: (record: Record<string, string> | undefined) => void;
}) {
  const toText = (r: Record<string, unknown> | undefined) =>
    Object.entries(r ?? {})
      .map(([k, v]) => `${k}: ${String(v)}`)
      .join('\n');
  const [text, setText] = useState(() => toText(props.value));
  return (
    <RuleField fields={props.fields} sub={props.sub} label={props.label}>
      {(a11y) => (
        <textarea
          {...a11y}
          rows={3}
          value={text}
          placeholder="name: value"
          onInput={(e) => {
            const typed = e.currentTarget.value;
            setText(typed);
            const entries = typed
              .split('\n')
              .map((line) => /^\s*([^:]+?)\s*:\s*(.*)$/.exec(line))
              .filter((m): m is RegExpExecArray => m !== null)
              .map((m) => [m[1] as string, m[2] as string]);
            props.set(entries.length ? Object.fromEntries(entries) : undefined);
          }}
        />
      )}
    </RuleField>
  );
}
