// The form that adds one channel to settings.json's sources; the daemon's refusal is shown beside the field
// it names.

import { useState } from 'preact/hooks';
import { PLATFORM_NAMES } from '../../../../shared/platforms.js';
import {
  MAX_SOURCES,
  SOURCE_PLATFORMS,
  type SourceEntry,
  type SourcePlatform,
} from '../../../../shared/settings.js';
import type { ApiError } from '../api.js';
import { Field, optionalNumberFromText } from '../fields.js';
import { describeError, Notice } from '../ui.js';
import { CHANNEL_HINTS, CHATROOM_ID_HINT, type Channel, channelIssue, chatroomIdIssue } from './channels.js';

type Refusal = { field: 'platform' | 'channel' | 'chatroomId' | undefined; message: string };

/** The daemon's refusal of the source at `index`: beside the field it names, else in a sentence. */
function refusalOf(err: ApiError, index: number): Refusal {
  const field = (['channel', 'platform', 'chatroomId'] as const).find(
    (f) => err.field === `sources.${index}.${f}`,
  );
  return { field, message: field ? err.message.replace(/^[^:]+: /, '') : describeError(err) };
}

/** Adds one channel; the daemon's refusal is shown beside the field it names. */
export function AddSource(props: {
  existing: readonly SourceEntry[];
  add: (entry: Channel) => Promise<{ refused: ApiError; index: number } | undefined>;
}) {
  const [platform, setPlatform] = useState<SourcePlatform>('tiktok');
  const [channel, setChannel] = useState('');
  const [chatroomText, setChatroomText] = useState('');
  const [tried, setTried] = useState(false);
  const [busy, setBusy] = useState(false);
  const [refused, setRefused] = useState<Refusal>();

  const full = props.existing.length >= MAX_SOURCES;
  const issue = tried ? channelIssue({ platform, channel }, props.existing) : undefined;
  const channelError = issue ?? (refused?.field === 'channel' ? refused.message : undefined);
  const platformError = refused?.field === 'platform' ? refused.message : undefined;
  const kick = platform === 'kick';
  const chatroomError =
    (tried && kick ? chatroomIdIssue(chatroomText) : undefined) ??
    (refused?.field === 'chatroomId' ? refused.message : undefined);

  const submit = async (e: Event) => {
    e.preventDefault();
    setTried(true);
    setRefused(undefined);
    if (channelIssue({ platform, channel }, props.existing)) return;
    if (kick && chatroomIdIssue(chatroomText)) return;
    const chatroomId = kick ? optionalNumberFromText(chatroomText) : undefined;
    setBusy(true);
    const outcome = await props.add({
      platform,
      channel: channel.trim(),
      ...(chatroomId !== undefined ? { chatroomId } : {}),
    });
    setBusy(false);
    if (!outcome) {
      setChannel('');
      setChatroomText('');
      setTried(false);
      return;
    }
    setRefused(refusalOf(outcome.refused, outcome.index));
  };

  const { placeholder, hint } = CHANNEL_HINTS[platform];
  return (
    <form class="card" onSubmit={submit} aria-labelledby="add-source-title" noValidate>
      <h3 id="add-source-title">Add a source</h3>
      <div class="add-source">
        <Field id="source-platform" label="Platform" error={platformError}>
          {(a) => (
            <select
              {...a}
              value={platform}
              onChange={(e) => {
                const next = SOURCE_PLATFORMS.find((p) => p === e.currentTarget.value);
                if (next) setPlatform(next);
                setRefused(undefined);
              }}
            >
              {SOURCE_PLATFORMS.map((p) => (
                <option key={p} value={p}>
                  {PLATFORM_NAMES[p]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field id="source-channel" label="Channel" error={channelError}>
          {(a) => (
            <input
              {...a}
              value={channel}
              placeholder={placeholder}
              autocomplete="off"
              spellcheck={false}
              onInput={(e) => {
                setChannel(e.currentTarget.value);
                setRefused(undefined);
              }}
            />
          )}
        </Field>
        {kick && (
          <Field id="source-chatroom-id" label="Chatroom id (optional)" error={chatroomError}>
            {(a) => (
              <input
                {...a}
                value={chatroomText}
                inputMode="numeric"
                autocomplete="off"
                onInput={(e) => {
                  setChatroomText(e.currentTarget.value);
                  setRefused(undefined);
                }}
              />
            )}
          </Field>
        )}
        <button type="submit" class="primary" disabled={busy || full}>
          Add source
        </button>
      </div>
      <p class="muted hint">
        {full ? `The list is full (${MAX_SOURCES} sources): remove one to add another.` : hint}
        {!full && kick && ` Chatroom id: ${CHATROOM_ID_HINT}`}
      </p>
      {refused && !refused.field && <Notice kind="error">Not added: {refused.message}</Notice>}
    </form>
  );
}
