// One row of the Sources view's table: a source of settings.json, its state, its switch and removal, and a
// Kick source's chatroom id.

import { useEffect, useState } from 'preact/hooks';
import { PLATFORM_NAMES } from '../../../../shared/platforms.js';
import type { SourceReport } from '../../../../shared/protocol/index.js';
import type { SourceEntry } from '../../../../shared/settings.js';
import { Field, optionalNumberFromText } from '../fields.js';
import { ConfirmButton, PlatformMark } from '../ui.js';
import { CHATROOM_ID_HINT, channelText, chatroomIdIssue } from './channels.js';
import { SourceStateLabel } from './source-state.js';

/** A Kick source's chatroom id, set or changed in place (the source starts again with it). */
function ChatroomIdEditor(props: {
  entry: SourceEntry;
  save: (chatroomId: number | undefined) => Promise<string | undefined>;
}) {
  const { entry } = props;
  const id = `chatroom-${entry.channel}`;
  const [text, setText] = useState(entry.chatroomId === undefined ? '' : String(entry.chatroomId));
  const [tried, setTried] = useState(false);
  const [refused, setRefused] = useState<string>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setText(entry.chatroomId === undefined ? '' : String(entry.chatroomId));
  }, [entry.chatroomId]);
  const issue = (tried ? chatroomIdIssue(text) : undefined) ?? refused;
  const unchanged = optionalNumberFromText(text) === entry.chatroomId;
  const submit = async (e: Event) => {
    e.preventDefault();
    setTried(true);
    setRefused(undefined);
    if (chatroomIdIssue(text)) return;
    setBusy(true);
    setRefused(await props.save(optionalNumberFromText(text)));
    setBusy(false);
  };
  return (
    <form class="row chatroom-id" onSubmit={submit} noValidate>
      <Field id={id} label="Chatroom id" error={issue}>
        {(a) => (
          <input
            {...a}
            value={text}
            size={10}
            inputMode="numeric"
            autocomplete="off"
            title={CHATROOM_ID_HINT}
            onInput={(e) => {
              setText(e.currentTarget.value);
              setRefused(undefined);
            }}
          />
        )}
      </Field>
      <button type="submit" disabled={busy || unchanged}>
        Save
      </button>
    </form>
  );
}

/** One source of settings.json, its state, and its switch and removal. */
export function SourceRow(props: {
  entry: SourceEntry;
  report: SourceReport | undefined;
  toggle: () => void;
  remove: () => void;
  /** Kick: sets the chatroom id; resolves with the daemon's refusal, if any. */
  setChatroomId: (chatroomId: number | undefined) => Promise<string | undefined>;
}) {
  const { entry, report } = props;
  const name = PLATFORM_NAMES[entry.platform];
  return (
    <tr data-source={`${entry.platform}:${entry.channel}`} data-enabled={entry.enabled ? 'yes' : 'no'}>
      <td>
        <PlatformMark platform={entry.platform} />
        {name}
      </td>
      <td class="source-channel">
        {channelText(entry)}
        {entry.platform === 'kick' && <ChatroomIdEditor entry={entry} save={props.setChatroomId} />}
      </td>
      <td>
        <SourceStateLabel report={report} pending={entry.enabled ? 'Starting…' : 'Turned off'} />
      </td>
      <td>
        <div class="row source-controls">
          <button type="button" onClick={props.toggle}>
            {entry.enabled ? 'Turn off' : 'Turn on'}
          </button>
          <ConfirmButton
            label="Remove"
            question={`Remove ${name} ${channelText(entry)}?`}
            onConfirm={props.remove}
          />
        </div>
      </td>
    </tr>
  );
}
