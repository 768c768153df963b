// One action of a rule, of any kind: its kind, the wait before it and its queue, and
// the fields of its kind — an overlay command, speech, an OBS request, a webhook, a Streamer.bot action or
// a chat message.
import { useEffect, useState } from 'preact/hooks';
import { chatLimitsText, chatPlatformsText, PLATFORM_NAMES } from '../../../../shared/platforms.js';
import type { StreamEventType, VoiceList } from '../../../../shared/protocol/index.js';
import {
  ACTION_KINDS,
  type ActionKind,
  CHAT_TARGETS,
  type ChatTarget,
  isOverlayAction,
  OBS_REQUESTS,
  type ObsRequest,
  type ObsRuleAction,
  type RuleAction,
} from '../../../../shared/rules.js';
import type { ControlApi } from '../api.js';
import { numberText, optionalNumberFromText } from '../fields.js';
import type { Shared } from '../shared-data.js';
import { FieldError } from '../ui.js';
import { OverlayActionFields, OverlaySelect } from './action-editor.js';
import { startingAction } from './new-rule.js';
import { RuleField, type RuleFields } from './rule-field.js';

const KIND_LABELS: Record<ActionKind, string> = {
  overlay: 'Overlay command (alert, sound, text…)',
  speak: 'Speak (text to speech)',
  obs: 'OBS (scene, source, mute, filter, hotkey)',
  webhook: 'Webhook (an HTTP request)',
  streamerbot: 'Streamer.bot action',
  chat: `Chat message (as you, on ${chatPlatformsText()})`,
};

/** A chat action's "Where", in words: a platform by its name. */
const chatTargetLabel = (t: ChatTarget): string =>
  t === 'same'
    ? 'The platform the event came from'
    : t === 'all'
      ? 'Every platform that can send now'
      : PLATFORM_NAMES[t];

type Speak = Extract<RuleAction, { kind: 'speak' }>;
type Webhook = Extract<RuleAction, { kind: 'webhook' }>;
type Streamerbot = Extract<RuleAction, { kind: 'streamerbot' }>;
type Chat = Extract<RuleAction, { kind: 'chat' }>;

interface KindProps<A> {
  fields: RuleFields;
  base: string;
  action: A;
  onChange: (a: RuleAction) => void;
}

/** An optional number input; empty removes the field. */
function OptionalNumber(props: {
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

function TextInput(props: {
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
function withKey<A extends object, K extends keyof A>(a: A, key: K, value: A[K] | undefined): A {
  const next = { ...a };
  if (value === undefined) delete next[key];
  else next[key] = value;
  return next;
}

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

/** The placeholders an event of each trigger fills in, for the hint beside a text to say. */
const SPEAK_PLACEHOLDERS: Record<StreamEventType, string> = {
  gift: '{user.nickname}, {data.giftName}, {data.repeatCount}',
  chat: '{user.nickname}, {data.comment}',
  like: '{user.nickname}, {data.likeCount}',
  follow: '{user.nickname}',
  share: '{user.nickname}',
  subscribe: '{user.nickname}',
  viewer: '{data.viewerCount}',
};

function SpeakFields(props: KindProps<Speak> & { shared: Shared; trigger: StreamEventType }) {
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

/** The params of each OBS request, as the dashboard asks for them. */
const OBS_PARAMS: Record<ObsRequest, readonly { key: string; label: string; bool?: true }[]> = {
  SetCurrentProgramScene: [{ key: 'sceneName', label: 'Scene' }],
  SetSceneItemEnabled: [
    { key: 'sceneName', label: 'Scene' },
    { key: 'sourceName', label: 'Source' },
    { key: 'enabled', label: 'Show it (untick: hide it)', bool: true },
  ],
  SetInputMute: [
    { key: 'inputName', label: 'Audio input' },
    { key: 'inputMuted', label: 'Mute it (untick: unmute it)', bool: true },
  ],
  ToggleInputMute: [{ key: 'inputName', label: 'Audio input' }],
  SetSourceFilterEnabled: [
    { key: 'sourceName', label: 'Source' },
    { key: 'filterName', label: 'Filter' },
    { key: 'filterEnabled', label: 'Turn it on (untick: off)', bool: true },
  ],
  TriggerHotkeyByName: [{ key: 'hotkeyName', label: 'Hotkey name' }],
};
const OBS_LABELS: Record<ObsRequest, string> = {
  SetCurrentProgramScene: 'Switch to a scene',
  SetSceneItemEnabled: 'Show or hide a source in a scene',
  SetInputMute: 'Mute or unmute an audio input',
  ToggleInputMute: 'Toggle an audio input’s mute',
  SetSourceFilterEnabled: 'Turn a filter on or off',
  TriggerHotkeyByName: 'Press an OBS hotkey',
};

/** The params a request starts with: empty names, and "on" for the switches. */
export function startingObsParams(request: ObsRequest): Record<string, unknown> {
  return Object.fromEntries(OBS_PARAMS[request].map((p) => [p.key, p.bool ? true : '']));
}

function ObsFields(props: KindProps<ObsRuleAction>) {
  const { fields, base, action, onChange } = props;
  const setParam = (key: string, value: unknown) =>
    onChange({ ...action, params: { ...action.params, [key]: value } });
  return (
    <>
      <RuleField fields={fields} sub={`${base}.request`} label="What OBS does">
        {(a11y) => (
          <select
            {...a11y}
            value={action.request}
            onChange={(e) => {
              const request = OBS_REQUESTS.find((r) => r === e.currentTarget.value);
              if (request) onChange({ ...action, request, params: startingObsParams(request) });
            }}
          >
            {OBS_REQUESTS.map((r) => (
              <option key={r} value={r}>
                {OBS_LABELS[r]}
              </option>
            ))}
          </select>
        )}
      </RuleField>
      {OBS_PARAMS[action.request].map((p) =>
        p.bool ? (
          <div key={p.key} class="field">
            <label class="check">
              <input
                type="checkbox"
                checked={action.params[p.key] === true}
                onChange={(e) => setParam(p.key, e.currentTarget.checked)}
              />
              {p.label}
            </label>
          </div>
        ) : (
          <TextInput
            key={p.key}
            fields={fields}
            sub={`${base}.params.${p.key}`}
            label={`${p.label} (as named in OBS)`}
            value={typeof action.params[p.key] === 'string' ? String(action.params[p.key]) : ''}
            set={(v) => setParam(p.key, v)}
          />
        ),
      )}
      {action.request !== 'TriggerHotkeyByName' && (
        <OptionalNumber
          fields={fields}
          sub={`${base}.revertAfterMs`}
          label="Undo after (ms): back to the scene or state before"
          placeholder="never"
          value={action.revertAfterMs}
          set={(ms) => onChange(withKey(action, 'revertAfterMs', ms))}
          min={1}
          max={600000}
          step={500}
        />
      )}
    </>
  );
}

/** "Name: value" lines for a record of strings (headers, Streamer.bot arguments). */
function LinesField(props: {
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

function WebhookFields(props: KindProps<Webhook>) {
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

function StreamerbotFields(props: KindProps<Streamerbot>) {
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

function ChatFields(props: KindProps<Chat> & { trigger: StreamEventType }) {
  const { fields, base, action, onChange } = props;
  return (
    <>
      <TextInput
        fields={fields}
        sub={`${base}.text`}
        label={`Message (${SPEAK_PLACEHOLDERS[props.trigger]} … are filled in)`}
        value={action.text}
        set={(text) => onChange({ ...action, text })}
      />
      <RuleField fields={fields} sub={`${base}.platform`} label="Where">
        {(a11y) => (
          <select
            {...a11y}
            value={action.platform ?? 'same'}
            onChange={(e) => {
              const platform = CHAT_TARGETS.find((t) => t === e.currentTarget.value);
              if (platform) onChange({ ...action, platform });
            }}
          >
            {CHAT_TARGETS.map((t) => (
              <option key={t} value={t}>
                {chatTargetLabel(t)}
              </option>
            ))}
          </select>
        )}
      </RuleField>
      <p class="muted">{chatLimitsText()}</p>
    </>
  );
}

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
      {isOverlayAction(action) ? (
        <OverlayActionFields
          fields={fields}
          trigger={props.trigger}
          index={props.index}
          action={action}
          shared={shared}
          onChange={onChange}
        />
      ) : action.kind === 'speak' ? (
        <SpeakFields
          fields={fields}
          base={base}
          action={action}
          onChange={onChange}
          shared={shared}
          trigger={props.trigger}
        />
      ) : action.kind === 'obs' ? (
        <ObsFields fields={fields} base={base} action={action} onChange={onChange} />
      ) : action.kind === 'webhook' ? (
        <WebhookFields fields={fields} base={base} action={action} onChange={onChange} />
      ) : action.kind === 'chat' ? (
        <ChatFields fields={fields} base={base} action={action} onChange={onChange} trigger={props.trigger} />
      ) : (
        <StreamerbotFields fields={fields} base={base} action={action} onChange={onChange} />
      )}
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
