// The payload fields of an action, one component per command (show-alert, play-sound, set-text, custom).
import { useState } from 'preact/hooks';
import type { MediaItem } from '../../api.js';
import { numberFromText, numberText, optionalNumberFromText } from '../../fields.js';
import { isAudio, isImage, isVideo } from '../../media-kinds.js';
import { FieldError } from '../../ui.js';
import { RuleField, type RuleFields } from '../rule-field.js';

export interface PayloadProps {
  fields: RuleFields;
  /** The action's path in its rule: `actions.<index>`. */
  base: string;
  payload: Record<string, unknown>;
  media: MediaItem[];
  /** Sets one payload key; undefined removes it. */
  setPayload: (key: string, value: unknown) => void;
}

const textOf = (payload: Record<string, unknown>, key: string) =>
  typeof payload[key] === 'string' ? String(payload[key]) : '';
const numberOf = (payload: Record<string, unknown>, key: string) =>
  typeof payload[key] === 'number' ? numberText(payload[key]) : '';

function TextPayload(props: PayloadProps & { name: string; label: string }) {
  const { name } = props;
  return (
    <RuleField fields={props.fields} sub={`${props.base}.payload.${name}`} label={props.label}>
      {(a11y) => (
        <input
          {...a11y}
          value={textOf(props.payload, name)}
          onInput={(e) => props.setPayload(name, e.currentTarget.value)}
        />
      )}
    </RuleField>
  );
}

/** A media file of one kind from the library; `optional` offers none. */
function MediaPayload(
  props: PayloadProps & { name: string; label: string; kind: (name: string) => boolean; optional: boolean },
) {
  const { name } = props;
  return (
    <RuleField fields={props.fields} sub={`${props.base}.payload.${name}`} label={props.label}>
      {(a11y) => (
        <select
          {...a11y}
          value={textOf(props.payload, name)}
          onChange={(e) => props.setPayload(name, e.currentTarget.value || undefined)}
        >
          <option value="">{props.optional ? 'None' : 'Choose…'}</option>
          {props.media
            .filter((m) => props.kind(m.name))
            .map((m) => (
              <option key={m.name} value={m.name}>
                {m.name}
              </option>
            ))}
        </select>
      )}
    </RuleField>
  );
}

export function AlertPayload(props: PayloadProps) {
  return (
    <>
      <TextPayload
        {...props}
        name="text"
        label="Alert text ({summary}, {user.nickname}, {data.giftName}, {data.repeatCount} … are filled in)"
      />
      <RuleField fields={props.fields} sub={`${props.base}.payload.duration`} label="Duration (ms)">
        {(a11y) => (
          <input
            {...a11y}
            type="number"
            min={100}
            max={60000}
            step={100}
            value={numberOf(props.payload, 'duration')}
            onInput={(e) => props.setPayload('duration', numberFromText(e.currentTarget.value))}
          />
        )}
      </RuleField>
      <MediaPayload {...props} name="image" label="Image" kind={isImage} optional />
      <MediaPayload {...props} name="sound" label="Sound" kind={isAudio} optional />
      <MediaPayload {...props} name="video" label="Video (replaces the image)" kind={isVideo} optional />
    </>
  );
}

export function SoundPayload(props: PayloadProps) {
  return (
    <>
      <MediaPayload {...props} name="sound" label="Sound" kind={isAudio} optional={false} />
      <RuleField fields={props.fields} sub={`${props.base}.payload.volume`} label="Volume (0–1)">
        {(a11y) => (
          <input
            {...a11y}
            type="number"
            min={0}
            max={1}
            step={0.05}
            value={numberOf(props.payload, 'volume')}
            onInput={(e) => props.setPayload('volume', optionalNumberFromText(e.currentTarget.value))}
          />
        )}
      </RuleField>
    </>
  );
}

export function SetTextPayload(props: PayloadProps) {
  return <TextPayload {...props} name="text" label="New text (templates allowed)" />;
}

/** A command the overlay page may not know: its name, and its payload as a JSON object. */
export function CustomPayload(
  props: PayloadProps & {
    command: string;
    onCommand: (command: string) => void;
    onPayload: (payload: Record<string, unknown>) => void;
  },
) {
  const { fields, base } = props;
  // The text as typed, so a half-written object is not lost while it does not parse yet.
  const [json, setJson] = useState(() => JSON.stringify(props.payload, null, 2));
  const [jsonError, setJsonError] = useState<string | undefined>();
  const id = `${fields.prefix}-${base}-json`;
  return (
    <>
      <RuleField fields={fields} sub={`${base}.command`} label="Custom command name">
        {(a11y) => (
          <input {...a11y} value={props.command} onInput={(e) => props.onCommand(e.currentTarget.value)} />
        )}
      </RuleField>
      <div class={`field${jsonError ? ' invalid' : ''}`}>
        <label for={id}>Payload (JSON object)</label>
        <textarea
          id={id}
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
              props.onPayload(Object.fromEntries(Object.entries(parsed)));
            } catch (err) {
              setJsonError(err instanceof Error ? err.message : 'not JSON');
            }
          }}
        />
        <FieldError id={`${id}-error`} message={jsonError} />
      </div>
    </>
  );
}
