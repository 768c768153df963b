// An overlay-command action: which overlay and widget, which command, and the command's payload.
import { KNOWN_COMMANDS, type StreamEventType } from '../../../../../shared/protocol/index.js';
import type { OverlayRuleAction } from '../../../../../shared/rules.js';
import { alertAnnounces } from '../../../../../shared/widget-reactions.js';
import type { Shared } from '../../shared-data.js';
import { Notice } from '../../ui.js';
import { widgetLabel } from '../../widget-defaults.js';
import { defaultWidgetId, startingPayload } from '../new-rule.js';
import { RuleField, type RuleFields } from '../rule-field.js';
import {
  AlertPayload,
  CustomPayload,
  type PayloadProps,
  SetTextPayload,
  SoundPayload,
} from './overlay-payload.js';

/** The overlay an action goes to (overlay commands and speech). */
export function OverlaySelect(props: {
  fields: RuleFields;
  sub: string;
  value: string;
  shared: Shared;
  onChange: (overlayId: string) => void;
}) {
  return (
    <RuleField fields={props.fields} sub={props.sub} label="Overlay">
      {(a11y) => (
        <select {...a11y} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
          <option value="">Choose an overlay…</option>
          {props.shared.overlays.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
        </select>
      )}
    </RuleField>
  );
}

export function OverlayActionFields(props: {
  fields: RuleFields;
  /** The rule's trigger: an alert that announces it by itself would show it twice. */
  trigger: StreamEventType;
  index: number;
  action: OverlayRuleAction;
  shared: Shared;
  onChange: (a: OverlayRuleAction) => void;
}) {
  const { fields, action, shared, onChange } = props;
  const base = `actions.${props.index}`;
  const overlay = shared.overlays.find((o) => o.id === action.overlayId);
  const known = KNOWN_COMMANDS.some((c) => c === action.command);
  const target = overlay?.widgets.find((w) => w.id === action.widgetId);
  const twice =
    action.command === 'show-alert' && target?.type === 'alert' && alertAnnounces(target, props.trigger);
  const payloadProps: PayloadProps = {
    fields,
    base,
    payload: action.payload,
    media: shared.media,
    setPayload: (key, value) => {
      const next = { ...action.payload };
      if (value === undefined) delete next[key];
      else next[key] = value;
      onChange({ ...action, payload: next });
    },
  };

  return (
    <>
      <OverlaySelect
        fields={fields}
        sub={`${base}.overlayId`}
        value={action.overlayId}
        shared={shared}
        onChange={(overlayId) => {
          const next = shared.overlays.find((o) => o.id === overlayId);
          onChange({ ...action, overlayId, widgetId: defaultWidgetId(next) });
        }}
      />
      <RuleField fields={fields} sub={`${base}.widgetId`} label="Widget">
        {(a11y) => (
          <select
            {...a11y}
            value={action.widgetId}
            onChange={(e) => onChange({ ...action, widgetId: e.currentTarget.value })}
          >
            <option value="">Choose a widget…</option>
            {action.widgetId && !overlay?.widgets.some((w) => w.id === action.widgetId) && (
              <option value={action.widgetId}>{action.widgetId} (not on this overlay)</option>
            )}
            {overlay?.widgets.map((w) => (
              <option key={w.id} value={w.id}>
                {widgetLabel(w)}
              </option>
            ))}
          </select>
        )}
      </RuleField>
      <RuleField fields={fields} sub={`${base}.command`} label="Command">
        {(a11y) => (
          <select
            {...a11y}
            value={known ? action.command : 'custom'}
            onChange={(e) => {
              const command = e.currentTarget.value;
              onChange({
                ...action,
                command: command === 'custom' ? 'my-command' : command,
                payload: startingPayload(command),
              });
            }}
          >
            {KNOWN_COMMANDS.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
            <option value="custom">custom…</option>
          </select>
        )}
      </RuleField>
      {twice && (
        <Notice kind="info">
          This alert already announces {props.trigger} events by itself, so each one would show twice: untick
          “{props.trigger}” under “Announce these events” in its properties, or send it to another alert.
        </Notice>
      )}
      {action.command === 'show-alert' && <AlertPayload {...payloadProps} />}
      {action.command === 'play-sound' && <SoundPayload {...payloadProps} />}
      {action.command === 'set-text' && <SetTextPayload {...payloadProps} />}
      {!known && (
        <CustomPayload
          {...payloadProps}
          command={action.command}
          onCommand={(command) => onChange({ ...action, command })}
          onPayload={(payload) => onChange({ ...action, payload })}
        />
      )}
    </>
  );
}
