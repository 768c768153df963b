// A labelled form control with the schema's message beside it, and the number parsing of number inputs.
import type { ComponentChildren } from 'preact';
import { FieldError } from './ui.js';

/** What a control needs to be labelled and described: spread it onto the input or select. */
export interface FieldA11y {
  id: string;
  'aria-invalid'?: 'true';
  'aria-describedby': string;
}

/**
 * The label, the control and its message. `id` names the control (tests and readers find fields by
 * it); the message gets `<id>-error`, which the control's aria-describedby points at.
 */
export function Field(props: {
  id: string;
  label: string;
  error: string | undefined;
  children: (a11y: FieldA11y) => ComponentChildren;
}) {
  const { id, error } = props;
  return (
    <div class={`field${error ? ' invalid' : ''}`}>
      <label for={id}>{props.label}</label>
      {props.children({
        id,
        ...(error ? { 'aria-invalid': 'true' as const } : {}),
        'aria-describedby': `${id}-error`,
      })}
      <FieldError id={`${id}-error`} message={error} />
    </div>
  );
}

/** A number input's value: NaN while empty or not a number, so the schema's message shows beside it. */
export const numberFromText = (text: string): number => (text.trim() === '' ? Number.NaN : Number(text));

/** An optional number input's value: absent while empty. */
export const optionalNumberFromText = (text: string): number | undefined =>
  text.trim() === '' ? undefined : Number(text);

/** The text a number input shows for a value (empty for absent or NaN). */
export const numberText = (value: number | undefined): string =>
  value === undefined || Number.isNaN(value) ? '' : String(value);
