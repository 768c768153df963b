// A `speak` action's form: the overlay that plays it, the text with its placeholders, the voice (the speech
// engine's, asked once per dashboard), speed and volume.
import { useEffect, useState } from 'preact/hooks';
import type { StreamEventType, VoiceList } from '../../../../../shared/protocol/index.js';
import type { RuleAction } from '../../../../../shared/rules.js';
import type { ControlApi } from '../../api.js';
import type { Shared } from '../../shared-data.js';
import { RuleField, type RuleFields } from '../rule-field.js';
import { type KindProps, OptionalNumber, SPEAK_PLACEHOLDERS, TextInput, withKey } from './inputs.js';
import { OverlaySelect } from './overlay.js';

type Speak = Extract<RuleAction, { kind: 'speak' }>;

/** The speech engine's voices, asked once per dashboard. */
let voicesOnce: Promise<VoiceList> | undefined;
export function useVoices(api: ControlApi): VoiceList | undefined {
  const [voices, setVoices] = useState<VoiceList | undefined>();
  useEffect(() => {
    voicesOnce ??= api.voices().catch(() => ({ engine: null, voices: [] }));
    void voicesOnce.then(setVoices);
  }, [api]);
  return voices;
}

export function VoiceSelect(props: {
  id?: string;
  fields?: RuleFields;
  sub?: string;
  api: ControlApi;
  value: string | undefined;
  set: (voice: string | undefined) => void;
}) {
  const list = useVoices(props.api);
  const select = (a11y: object) => (
    <select
      {...a11y}
      value={props.value ?? ''}
      onChange={(e) => props.set(e.currentTarget.value || undefined)}
    >
      <option value="">The engine's default voice</option>
      {props.value && !list?.voices.some((v) => v.id === props.value) && (
        <option value={props.value}>{props.value}</option>
      )}
      {list?.voices.map((v) => (
        <option key={v.id} value={v.id}>
          {v.name} ({v.language})
        </option>
      ))}
    </select>
  );
  const note =
    list && list.engine === null ? (
      <p class="muted">No speech engine was found on this computer (see docs/actions.md).</p>
    ) : null;
  if (props.fields && props.sub)
    return (
      <>
        <RuleField fields={props.fields} sub={props.sub} label="Voice">
          {select}
        </RuleField>
        {note}
      </>
    );
  return (
    <>
      {select({ id: props.id })}
      {note}
    </>
  );
}

export function SpeakFields(props: KindProps<Speak> & { shared: Shared; trigger: StreamEventType }) {
  const { fields, base, action, onChange, shared } = props;
  return (
    <>
      <OverlaySelect
        fields={fields}
        sub={`${base}.overlayId`}
        value={action.overlayId}
        shared={shared}
        onChange={(overlayId) => onChange({ ...action, overlayId })}
      />
      <TextInput
        fields={fields}
        sub={`${base}.text`}
        label={`Text to say (${SPEAK_PLACEHOLDERS[props.trigger]} … are filled in)`}
        value={action.text}
        set={(text) => onChange({ ...action, text })}
      />
      <VoiceSelect
        fields={fields}
        sub={`${base}.voice`}
        api={shared.api}
        value={action.voice}
        set={(voice) => onChange(withKey(action, 'voice', voice))}
      />
      <OptionalNumber
        fields={fields}
        sub={`${base}.rate`}
        label="Speed (0.5–2)"
        placeholder="1"
        value={action.rate}
        set={(rate) => onChange(withKey(action, 'rate', rate))}
        min={0.5}
        max={2}
        step={0.1}
      />
      <OptionalNumber
        fields={fields}
        sub={`${base}.volume`}
        label="Volume (0–1)"
        placeholder="1"
        value={action.volume}
        set={(volume) => onChange(withKey(action, 'volume', volume))}
        min={0}
        max={1}
        step={0.05}
      />
    </>
  );
}
