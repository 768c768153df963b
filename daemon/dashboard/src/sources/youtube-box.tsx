// YouTube in the Sources view: the Data API key live chats are read with; the page learns only whether one
// is set, and where the key in force comes from.
import { useState } from 'preact/hooks';
import type { CredentialOrigin } from '../../../../shared/credentials.js';
import { type SettingsView as Settings, SettingsInput } from '../../../../shared/settings.js';
import { ApiError, type ControlApi } from '../api.js';
import { fieldIssues } from '../field-issues.js';
import { Field } from '../fields.js';
import { ConfirmButton, describeError, Notice, PlatformMark } from '../ui.js';
import type { Note } from './channels.js';

/** The key in force in words: this page's, the Gatekeeper config's, or why there is none (yet). */
const KEY_WORDS: Record<CredentialOrigin, { text: string; class: string }> = {
  settings: { text: 'set', class: 'yes' },
  gatekeeper: { text: 'from the Gatekeeper’s config', class: 'yes' },
  waiting: { text: 'waiting for the Gatekeeper’s config (it may give one)', class: 'muted' },
  unreachable: {
    text: 'not set here, and the Gatekeeper (whose config may give one) cannot be reached',
    class: 'no',
  },
  none: { text: 'not set', class: 'no' },
};

/** YouTube: the Data API key live chats are read with; the page learns only whether one is set. */
export function YouTubeBox(props: {
  api: ControlApi;
  settings: Settings;
  saved: (s: Settings) => void;
  origin: CredentialOrigin | undefined;
}) {
  const isSet = props.settings.youtube.apiKey.set;
  const origin: CredentialOrigin = isSet ? 'settings' : (props.origin ?? 'none');
  const words = KEY_WORDS[origin === 'settings' && !isSet ? 'none' : origin];
  const [apiKey, setApiKey] = useState('');
  const [tried, setTried] = useState(false);
  const [refused, setRefused] = useState<string>();
  const [note, setNote] = useState<Note>();
  const trimmed = apiKey.trim();
  const issue = tried
    ? trimmed === ''
      ? 'type the key to save it'
      : fieldIssues(SettingsInput, { youtube: { apiKey: trimmed } }).get('youtube.apiKey')
    : undefined;

  const put = async (key: string | null, done: string) => {
    setRefused(undefined);
    setNote(undefined);
    try {
      const saved = await props.api.changeSettings((s) => ({ ...s, youtube: { apiKey: key ?? null } }));
      props.saved(saved);
      setApiKey('');
      setTried(false);
      setNote({ kind: 'ok', text: done });
    } catch (err) {
      if (err instanceof ApiError && err.field === 'youtube.apiKey')
        setRefused(err.message.replace(/^[^:]+: /, ''));
      else setNote({ kind: 'error', text: `Not saved: ${describeError(err)}` });
    }
  };
  const save = async (e: Event) => {
    e.preventDefault();
    setTried(true);
    if (trimmed === '' || fieldIssues(SettingsInput, { youtube: { apiKey: trimmed } }).size > 0) return;
    await put(trimmed, 'Key saved.');
  };

  return (
    <section class="card" aria-labelledby="youtube-title" data-part="youtube">
      <h3 id="youtube-title">
        <PlatformMark platform="youtube" />
        YouTube
      </h3>
      <p>
        API key:{' '}
        <strong
          class={words.class}
          data-key-state={origin === 'none' ? 'not-set' : origin === 'settings' ? 'set' : origin}
        >
          {words.text}
        </strong>
      </p>
      {/* Secrets change on the streamer's computer only (decisions-3 §11). */}
      {props.api.changesSecrets && (
        <form onSubmit={save} noValidate>
          <Field id="youtube-api-key" label="YouTube Data API key" error={issue ?? refused}>
            {(a) => (
              <input
                {...a}
                type="password"
                autocomplete="off"
                spellcheck={false}
                placeholder={isSet ? '(set: type a new one to replace it)' : '(not set)'}
                value={apiKey}
                onInput={(e) => {
                  setApiKey(e.currentTarget.value);
                  setRefused(undefined);
                }}
              />
            )}
          </Field>
          <div class="row">
            <button type="submit">{isSet ? 'Replace the key' : 'Save the key'}</button>
            {isSet && (
              <ConfirmButton
                label="Remove the key"
                question="Remove the YouTube API key?"
                onConfirm={() => void put(null, 'Key removed.')}
              />
            )}
          </div>
        </form>
      )}
      <p class="muted hint">
        Get a key in the Google Cloud console: create a project, enable the YouTube Data API v3 for it (APIs
        &amp; Services → Library), then Credentials → Create credentials → API key. Reading a live chat is
        polled and uses the key’s daily quota (10,000 units a day unless Google granted more); once it is used
        up, YouTube sources wait for the next day. Leave it unset when the Gatekeeper’s config supplies a key.
      </p>
      {note && <Notice kind={note.kind}>{note.text}</Notice>}
    </section>
  );
}
