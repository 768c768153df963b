// The property panel of the selected widget: every field of its kind, with the schema's message beside it.
import type { ComponentChildren } from 'preact';
import {
  GOAL_SOURCES,
  STREAM_EVENT_TYPES,
  type StreamEventType,
  type Widget,
} from '../../../../shared/protocol/index.js';
import type { MediaItem } from '../api.js';
import { isAudio, isImage } from '../media-kinds.js';
import { FieldError } from '../ui.js';

type GoalSource = (typeof GOAL_SOURCES)[number];

const FONTS = ['system-ui, sans-serif', 'Georgia, serif', 'Impact, sans-serif', '"Courier New", monospace'];

/** Sets or (for undefined) removes one field, keeping the widget's own type. */
function withField<W extends Widget, K extends keyof W>(w: W, key: K, value: W[K] | undefined): W {
  const next = { ...w };
  if (value === undefined) delete next[key];
  else next[key] = value;
  return next;
}

const toNumber = (text: string): number => (text.trim() === '' ? Number.NaN : Number(text));
const toOptionalNumber = (text: string): number | undefined =>
  text.trim() === '' ? undefined : Number(text);

interface FieldProps {
  name: string;
  label: string;
  error: string | undefined;
  children: (a11y: { id: string; 'aria-invalid'?: 'true'; 'aria-describedby': string }) => ComponentChildren;
}

function Field(props: FieldProps) {
  const id = `prop-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children({
        id,
        ...(props.error ? { 'aria-invalid': 'true' as const } : {}),
        'aria-describedby': `${id}-error`,
      })}
      <FieldError id={`${id}-error`} message={props.error} />
    </div>
  );
}

export interface PanelProps {
  widget: Widget;
  media: MediaItem[];
  /** Schema message for a field of this widget, by field name. */
  errorFor: (field: string) => string | undefined;
  /** `key` makes a run of edits to one field a single undo step. */
  onChange: (next: Widget, key: string) => void;
}

export function Properties(props: PanelProps) {
  const { widget: w, errorFor, onChange } = props;
  const images = props.media.filter((m) => isImage(m.name));
  const sounds = props.media.filter((m) => isAudio(m.name));

  const num = <K extends string>(
    name: K,
    label: string,
    value: number | undefined,
    set: (v: number | undefined) => Widget,
    opts: { optional?: boolean; min?: number; max?: number; step?: number } = {},
  ) => (
    <Field name={name} label={label} error={errorFor(name)}>
      {(a11y) => (
        <input
          {...a11y}
          type="number"
          value={value === undefined || Number.isNaN(value) ? '' : String(value)}
          min={opts.min}
          max={opts.max}
          step={opts.step ?? 1}
          placeholder={opts.optional ? 'auto' : undefined}
          onInput={(e) => {
            const text = e.currentTarget.value;
            onChange(set(opts.optional ? toOptionalNumber(text) : toNumber(text)), `${w.id}.${name}`);
          }}
        />
      )}
    </Field>
  );
  const text = (
    name: string,
    label: string,
    value: string | undefined,
    set: (v: string) => Widget,
    multiline = false,
  ) => (
    <Field name={name} label={label} error={errorFor(name)}>
      {(a11y) =>
        multiline ? (
          <textarea
            {...a11y}
            rows={3}
            value={value ?? ''}
            onInput={(e) => onChange(set(e.currentTarget.value), `${w.id}.${name}`)}
          />
        ) : (
          <input
            {...a11y}
            value={value ?? ''}
            onInput={(e) => onChange(set(e.currentTarget.value), `${w.id}.${name}`)}
          />
        )
      }
    </Field>
  );
  const colour = (value: string | undefined, set: (v: string | undefined) => Widget) => (
    <Field name="color" label="Colour" error={errorFor('color')}>
      {(a11y) => (
        <span class="colour">
          <input
            type="color"
            aria-label="Colour picker"
            value={value && /^#[0-9a-f]{6}$/i.test(value) ? value : '#ffffff'}
            onInput={(e) => onChange(set(e.currentTarget.value), `${w.id}.color`)}
          />
          <input
            {...a11y}
            value={value ?? ''}
            placeholder="#ffffff"
            onInput={(e) => onChange(set(e.currentTarget.value || undefined), `${w.id}.color`)}
          />
        </span>
      )}
    </Field>
  );
  /** What a goal or counter counts; `noneLabel` offers counting nothing (the empty choice). */
  const sourceSelect = (
    value: GoalSource | undefined,
    noneLabel: string | undefined,
    set: (source: GoalSource | undefined) => Widget,
  ) => (
    <Field name="source" label="Counts" error={errorFor('source')}>
      {(a11y) => (
        <select
          {...a11y}
          value={value ?? ''}
          onChange={(e) => {
            const chosen = e.currentTarget.value;
            onChange(set(GOAL_SOURCES.find((s) => s === chosen)), `${w.id}.source`);
          }}
        >
          {noneLabel !== undefined && <option value="">{noneLabel}</option>}
          {GOAL_SOURCES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
  /** A tick box per stream event type; an empty choice is stored as absent. */
  const eventTypeChecks = (
    legend: string,
    name: string,
    value: readonly StreamEventType[] | undefined,
    set: (list: StreamEventType[] | undefined) => Widget,
  ) => (
    <fieldset class="field">
      <legend>{legend}</legend>
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
              onChange(set(list.length ? list : undefined), `${w.id}.${name}.${t}`);
            }}
          />
          {t}
        </label>
      ))}
    </fieldset>
  );
  const mediaSelect = (
    name: string,
    label: string,
    value: string | undefined,
    items: MediaItem[],
    set: (v: string | undefined) => Widget,
    optional: boolean,
  ) => (
    <Field name={name} label={label} error={errorFor(name)}>
      {(a11y) => (
        <select
          {...a11y}
          value={value ?? ''}
          onChange={(e) => onChange(set(e.currentTarget.value || undefined), `${w.id}.${name}`)}
        >
          {optional && <option value="">None</option>}
          {value && !items.some((m) => m.name === value) && <option value={value}>{value} (missing)</option>}
          {items.map((m) => (
            <option key={m.name} value={m.name}>
              {m.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );

  const common = (
    <>
      {num('x', 'X (px)', w.x, (v) => ({ ...w, x: v ?? Number.NaN }))}
      {num('y', 'Y (px)', w.y, (v) => ({ ...w, y: v ?? Number.NaN }))}
      {num('width', 'Width (px)', w.width, (v) => withField(w, 'width', v), { optional: true, min: 0 })}
      {num('height', 'Height (px)', w.height, (v) => withField(w, 'height', v), { optional: true, min: 0 })}
    </>
  );

  let specific: ComponentChildren = null;
  switch (w.type) {
    case 'text':
      specific = (
        <>
          {text('content', 'Text', w.content, (v) => ({ ...w, content: v }), true)}
          <Field name="fontFamily" label="Font" error={errorFor('fontFamily')}>
            {(a11y) => (
              <>
                <input
                  {...a11y}
                  list="font-list"
                  value={w.fontFamily ?? ''}
                  onInput={(e) =>
                    onChange(
                      withField(w, 'fontFamily', e.currentTarget.value || undefined),
                      `${w.id}.fontFamily`,
                    )
                  }
                />
                <datalist id="font-list">
                  {FONTS.map((f) => (
                    <option key={f} value={f} />
                  ))}
                </datalist>
              </>
            )}
          </Field>
          {num('fontSize', 'Font size (px)', w.fontSize, (v) => withField(w, 'fontSize', v), {
            optional: true,
            min: 1,
            max: 1000,
          })}
          {colour(w.color, (v) => withField(w, 'color', v))}
        </>
      );
      break;
    case 'image':
      specific = mediaSelect('src', 'Image', w.src, images, (v) => ({ ...w, src: v ?? '' }), false);
      break;
    case 'alert':
      specific = (
        <>
          {num('duration', 'Duration (ms)', w.duration, (v) => ({ ...w, duration: v ?? Number.NaN }), {
            min: 100,
            max: 60000,
            step: 100,
          })}
          {mediaSelect('image', 'Image', w.image, images, (v) => withField(w, 'image', v), true)}
          {mediaSelect('sound', 'Sound', w.sound, sounds, (v) => withField(w, 'sound', v), true)}
          {num('fontSize', 'Font size (px)', w.fontSize, (v) => withField(w, 'fontSize', v), {
            optional: true,
            min: 1,
          })}
          {colour(w.color, (v) => withField(w, 'color', v))}
          {eventTypeChecks(
            'Announce these events by itself (besides show-alert commands)',
            'events',
            w.events,
            (list) => withField(w, 'events', list),
          )}
        </>
      );
      break;
    case 'goal':
      specific = (
        <>
          {text('title', 'Title', w.title, (v) => ({ ...w, title: v }))}
          {sourceSelect(w.source, undefined, (source) => (source ? { ...w, source } : w))}
          {num('target', 'Target', w.target, (v) => ({ ...w, target: v ?? Number.NaN }), { min: 1 })}
          {num('current', 'Progress so far', w.current, (v) => ({ ...w, current: v ?? Number.NaN }), {
            min: 0,
          })}
          {colour(w.color, (v) => withField(w, 'color', v))}
        </>
      );
      break;
    case 'chat':
      specific = (
        <>
          {num(
            'maxMessages',
            'Messages shown',
            w.maxMessages,
            (v) => ({ ...w, maxMessages: v ?? Number.NaN }),
            {
              min: 1,
              max: 100,
            },
          )}
          {num('fontSize', 'Font size (px)', w.fontSize, (v) => withField(w, 'fontSize', v), {
            optional: true,
            min: 1,
          })}
          {colour(w.color, (v) => withField(w, 'color', v))}
        </>
      );
      break;
    case 'counter':
      specific = (
        <>
          {text('label', 'Label', w.label, (v) => ({ ...w, label: v }))}
          {sourceSelect(w.source, 'Nothing (set by commands)', (source) => withField(w, 'source', source))}
          {num('value', 'Value', w.value, (v) => ({ ...w, value: v ?? Number.NaN }))}
          {num('fontSize', 'Font size (px)', w.fontSize, (v) => withField(w, 'fontSize', v), {
            optional: true,
            min: 1,
          })}
          {colour(w.color, (v) => withField(w, 'color', v))}
        </>
      );
      break;
    case 'event-list':
      specific = (
        <>
          {num('maxEvents', 'Events shown', w.maxEvents, (v) => ({ ...w, maxEvents: v ?? Number.NaN }), {
            min: 1,
            max: 100,
          })}
          {eventTypeChecks('Event types (none ticked: all)', 'eventTypes', w.eventTypes, (list) =>
            withField(w, 'eventTypes', list),
          )}
          {colour(w.color, (v) => withField(w, 'color', v))}
        </>
      );
      break;
    case 'top-gifters':
      specific = (
        <>
          {num('maxEntries', 'Entries shown', w.maxEntries, (v) => ({ ...w, maxEntries: v ?? Number.NaN }), {
            min: 1,
            max: 50,
          })}
          {colour(w.color, (v) => withField(w, 'color', v))}
        </>
      );
      break;
  }

  return (
    <div class="properties">
      <p class="muted">
        {w.type} · <code>{w.id}</code>
      </p>
      {specific}
      {common}
    </div>
  );
}
