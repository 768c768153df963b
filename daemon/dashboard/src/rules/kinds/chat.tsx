// A `chat` action's form: the message with its placeholders and where it goes.
import type { StreamEventType } from '../../../../../shared/protocol/index.js';
import { CHAT_TARGETS, type ChatTarget, type RuleAction } from '../../../../../shared/rules.js';
import { RuleField } from '../rule-field.js';
import { type KindProps, SPEAK_PLACEHOLDERS, TextInput } from './inputs.js';

type Chat = Extract<RuleAction, { kind: 'chat' }>;

const CHAT_TARGET_LABELS: Record<ChatTarget, string> = {
  same: 'The platform the event came from',
  twitch: 'Twitch',
  kick: 'Kick',
  youtube: 'YouTube',
  all: 'Every platform that can send now',
};

export function ChatFields(props: KindProps<Chat> & { trigger: StreamEventType }) {
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
                {CHAT_TARGET_LABELS[t]}
              </option>
            ))}
          </select>
        )}
      </RuleField>
      <p class="muted">
        Cut to 500 characters on Twitch and Kick, 200 on YouTube. TikTok does not allow sending chat.
      </p>
    </>
  );
}
