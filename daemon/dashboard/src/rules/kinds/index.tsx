// The action kinds' forms behind one table: each kind's label and the form that edits it (one file per kind,
// like the daemon's actions/kinds/).
import { chatPlatformsText } from '../../../../../shared/platforms.js';
import type { StreamEventType } from '../../../../../shared/protocol/index.js';
import { type ActionKind, isOverlayAction, type RuleAction } from '../../../../../shared/rules.js';
import type { Shared } from '../../shared-data.js';
import type { RuleFields } from '../rule-field.js';
import { ChatFields } from './chat.js';
import { ObsFields } from './obs.js';
import { OverlayActionFields } from './overlay.js';
import { SpeakFields } from './speak.js';
import { StreamerbotFields } from './streamerbot.js';
import { WebhookFields } from './webhook.js';

export const KIND_LABELS: Record<ActionKind, string> = {
  overlay: 'Overlay command (alert, sound, text…)',
  speak: 'Speak (text to speech)',
  obs: 'OBS (scene, source, mute, filter, hotkey)',
  webhook: 'Webhook (an HTTP request)',
  streamerbot: 'Streamer.bot action',
  chat: `Chat message (as you, on ${chatPlatformsText()})`,
};

/** The form of an action's kind. */
export function KindFields(props: {
  fields: RuleFields;
  trigger: StreamEventType;
  index: number;
  action: RuleAction;
  shared: Shared;
  onChange: (a: RuleAction) => void;
}) {
  const { fields, action, shared, onChange, trigger } = props;
  const base = `actions.${props.index}`;
  if (isOverlayAction(action))
    return (
      <OverlayActionFields
        fields={fields}
        trigger={trigger}
        index={props.index}
        action={action}
        shared={shared}
        onChange={onChange}
      />
    );
  switch (action.kind) {
    case 'speak':
      return (
        <SpeakFields
          fields={fields}
          base={base}
          action={action}
          onChange={onChange}
          shared={shared}
          trigger={trigger}
        />
      );
    case 'obs':
      return <ObsFields fields={fields} base={base} action={action} onChange={onChange} />;
    case 'webhook':
      return <WebhookFields fields={fields} base={base} action={action} onChange={onChange} />;
    case 'chat':
      return <ChatFields fields={fields} base={base} action={action} onChange={onChange} trigger={trigger} />;
    case 'streamerbot':
      return <StreamerbotFields fields={fields} base={base} action={action} onChange={onChange} />;
  }
}
