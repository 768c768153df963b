// A `chat` action's form: the message with its placeholders and where it goes.
import { chatLimitsText, PLATFORM_NAMES } from '../../../../../shared/platforms.js';
import type { StreamEventType } from '../../../../../shared/protocol/index.js';
import { CHAT_TARGETS, type ChatTarget, type RuleAction } from '../../../../../shared/rules.js';
import { RuleField } from '../rule-field.js';
import { type KindProps, SPEAK_PLACEHOLDERS, TextInput } from './inputs.js';

type Chat = Extract<RuleAction, { kind: 'chat' }>;

/** A chat action's "Where", in words: a platform by its name. */
const chatTargetLabel = (t: ChatTarget): string =>
  t === 'same'
    ? 'The platform the event came from'
    : t === 'all'
      ? 'Every platform that can send now'
      : PLATFORM_NAMES[t];

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
