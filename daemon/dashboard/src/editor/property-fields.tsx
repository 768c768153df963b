// The controls of the property panel: number, text, colour, font, media, counted source and event types.
// Each edits one field of the selected widget; a run of edits to one field is one undo step.
import type { ComponentChildren } from 'preact';
import {
  GOAL_SOURCES,
  STREAM_EVENT_TYPES,
  type StreamEventType,
  type Widget,
} from '../../../../shared/protocol/index.js';
import type { MediaItem } from '../api.js';
import { Field, type FieldA11y, numberFromText, numberText, optionalNumberFromText } from '../fields.js';

type GoalSource = (typeof GOAL_SOURCES)[number];

const FONTS = ['system-ui, sans-serif', 'Georgia, serif', 'Impact, sans-serif', '"Courier New", monospace'];

/** The selected widget as its fields see it. */
export interface WidgetFields {
  widget: Widget;
  /** Schema message for a field of this widget, by field name. */
  errorFor: (field: string) => string | undefined;
  /** `key` makes a run of edits to one field a single undo step. */
  onChange: (next: Widget, key: string) => void;
}

/** Sets or (for undefined) removes one field, keeping the widget's own type. */
export function withField<W extends Widget, K extends keyof W>(w: W, key: K, value: W[K] | undefined): W {
  const next = { ...w };
  if (value === undefined) delete next[key];
  else next[key] = value;
  return next;
}

function PropField(props: {
  f: WidgetFields;
  name: string;
  label: string;
  children: (a11y: FieldA11y) => ComponentChildren;
}) {
  return (
    <Field id={`prop-${props.name}`} label={props.label} error={props.f.errorFor(props.name)}>
      {props.children}
    </Field>
  );
}

const keyOf = (f: WidgetFields, name: string) => `${f.widget.id}.${name}`;

export function NumberProp(props: {
  f: WidgetFields;
  name: string;
  label: string;
  value: number | undefined;
  set: (v: number | undefined) => Widget;
  optional?: boolean;
  min?: number;
  max?: number;
  step?: number;
}) {
  const { f, name } = props;
  return (
    <PropField f={f} name={name} label={props.label}>
      {(a11y) => (
        <input
          {...a11y}
          type="number"
          value={numberText(props.value)}
          min={props.min}
          max={props.max}
          step={props.step ?? 1}
          placeholder={props.optional ? 'auto' : undefined}
          onInput={(e) => {
            const text = e.currentTarget.value;
            f.onChange(
              props.set(props.optional ? optionalNumberFromText(text) : numberFromText(text)),
              keyOf(f, name),
            );
          }}
        />
      )}
    </PropField>
  );
}

export function TextProp(props: {
  f: WidgetFields;
  name: string;
  label: string;
  value: string | undefined;
  set: (v: string) => Widget;
  multiline?: boolean;
}) {
  const { f, name } = props;
  const onInput = (e: { currentTarget: HTMLInputElement | HTMLTextAreaElement }) =>
    f.onChange(props.set(e.currentTarget.value), keyOf(f, name));
  return (
    <PropField f={f} name={name} label={props.label}>
      {(a11y) =>
        props.multiline ? (
          <textarea {...a11y} rows={3} value={props.value ?? ''} onInput={onInput} />
        ) : (
          <input {...a11y} value={props.value ?? ''} onInput={onInput} />
        )
      }
    </PropField>
  );
}

export function ColourProp(props: {
  f: WidgetFields;
  value: string | undefined;
  set: (v: string | undefined) => Widget;
}) {
  const { f, value } = props;
  return (
    <PropField f={f} name="color" label="Colour">
      {(a11y) => (
        <span class="colour">
          <input
            type="color"
            aria-label="Colour picker"
            value={value && /^#[0-9a-f]{6}$/i.test(value) ? value : '#ffffff'}
            onInput={(e) => f.onChange(props.set(e.currentTarget.value), keyOf(f, 'color'))}
          />
          <input
            {...a11y}
            value={value ?? ''}
            placeholder="#ffffff"
            onInput={(e) => f.onChange(props.set(e.currentTarget.value || undefined), keyOf(f, 'color'))}
          />
        </span>
      )}
    </PropField>
  );
}

/** A free font name, with a few suggestions that exist on every system. */
export function FontProp(props: {
  f: WidgetFields;
  value: string | undefined;
  set: (v: string | undefined) => Widget;
}) {
  const { f } = props;
  return (
    <PropField f={f} name="fontFamily" label="Font">
      {(a11y) => (
        <>
          <input
            {...a11y}
            list="font-list"
            value={props.value ?? ''}
            onInput={(e) => f.onChange(props.set(e.currentTarget.value || undefined), keyOf(f, 'fontFamily'))}
          />
          <datalist id="font-list">
            {FONTS.map((font) => (
              <option key={font} value={font} />
            ))}
          </datalist>
        </>
      )}
    </PropField>
  );
}

/** What a goal or counter counts; `noneLabel` offers counting nothing (the empty choice). */
export function SourceProp(props: {
  f: WidgetFields;
  value: GoalSource | undefined;
  noneLabel?: string;
  set: (source: GoalSource | undefined) => Widget;
}) {
  const { f } = props;
  return (
    <PropField f={f} name="source" label="Counts">
      {(a11y) => (
        <select
          {...a11y}
          value={props.value ?? ''}
          onChange={(e) => {
            const chosen = e.currentTarget.value;
            f.onChange(props.set(GOAL_SOURCES.find((s) => s === chosen)), keyOf(f, 'source'));
          }}
        >
          {props.noneLabel !== undefined && <option value="">{props.noneLabel}</option>}
          {GOAL_SOURCES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      )}
    </PropField>
  );
}

/** One tick box (an alert video's sound). */
export function CheckProp(props: {
  f: WidgetFields;
  name: string;
  label: string;
  value: boolean;
  set: (on: boolean) => Widget;
}) {
  const { f, name } = props;
  return (
    <div class="field">
      <label class="check">
        <input
          type="checkbox"
          checked={props.value}
          onChange={(e) => f.onChange(props.set(e.currentTarget.checked), keyOf(f, name))}
        />
        {props.label}
      </label>
    </div>
  );
}

/** A tick box per stream event type; an empty choice is stored as absent. */
export function EventTypesProp(props: {
  f: WidgetFields;
  legend: string;
  name: string;
  value: readonly StreamEventType[] | undefined;
  set: (list: StreamEventType[] | undefined) => Widget;
}) {
  const { f, value } = props;
  return (
    <fieldset class="field">
      <legend>{props.legend}</legend>
      {STREAM_EVENT_TYPES.map((t) => (
        <label key={t} class="check">
          <input
            type="checkbox"
            checked={value?.includes(t) ?? false}
            onChange={(e) => {
              const chosen = new Set(value ?? []);
              if (e.currentTarget.checked) chosen.add(t);
              else chosen.delete(t);
              const list = STREAM_EVENT_TYPES.filter((x) => chosen.has(x));
              f.onChange(props.set(list.length ? list : undefined), keyOf(f, `${props.name}.${t}`));
            }}
          />
          {t}
        </label>
      ))}
    </fieldset>
  );
}

/** A file of the media library; one that is no longer there stays selectable, marked missing. */
export function MediaProp(props: {
  f: WidgetFields;
  name: string;
  label: string;
  value: string | undefined;
  items: MediaItem[];
  set: (v: string | undefined) => Widget;
  optional: boolean;
}) {
  const { f, name, value, items } = props;
  return (
    <PropField f={f} name={name} label={props.label}>
      {(a11y) => (
        <select
          {...a11y}
          value={value ?? ''}
          onChange={(e) => f.onChange(props.set(e.currentTarget.value || undefined), keyOf(f, name))}
        >
          {props.optional && <option value="">None</option>}
          {value && !items.some((m) => m.name === value) && <option value={value}>{value} (missing)</option>}
          {items.map((m) => (
            <option key={m.name} value={m.name}>
              {m.name}
            </option>
          ))}
        </select>
      )}
    </PropField>
  );
}

/** One of a few named choices (an alert's style). */
export function ChoiceProp<T extends string>(props: {
  f: WidgetFields;
  name: string;
  label: string;
  value: T;
  choices: readonly { value: T; label: string }[];
  set: (v: T) => Widget;
}) {
  const { f, name } = props;
  return (
    <PropField f={f} name={name} label={props.label}>
      {(a11y) => (
        <select
          {...a11y}
          value={props.value}
          onChange={(e) => {
            const chosen = props.choices.find((c) => c.value === e.currentTarget.value);
            if (chosen) f.onChange(props.set(chosen.value), keyOf(f, name));
          }}
        >
          {props.choices.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      )}
    </PropField>
  );
}
