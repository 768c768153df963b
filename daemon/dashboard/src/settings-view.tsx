// Settings (settings.json through /api/settings): OBS's address and password, Streamer.bot's address,
// and speech. The password is never shown: leave it empty to keep the one stored.
import { useEffect, useState } from 'preact/hooks';
import type { SettingsView as Settings, SettingsInput } from '../../../shared/settings.js';
import { ApiError } from './api.js';
import { Field } from './fields.js';
import type { Shared } from './shared-data.js';
import { describeError, Notice } from './ui.js';

interface Draft {
  obsUrl: string;
  obsPassword: string;
  clearPassword: boolean;
  streamerbotUrl: string;
  maxChars: string;
  blockedWords: string;
  userCooldownMs: string;
}

const draftOf = (s: Settings): Draft => ({
  obsUrl: s.obs.url,
  obsPassword: '',
  clearPassword: false,
  streamerbotUrl: s.streamerbot.url,
  maxChars: String(s.tts.maxChars),
  blockedWords: s.tts.blockedWords.join(', '),
  userCooldownMs: String(s.tts.userCooldownMs),
});

export function SettingsView(props: { shared: Shared }) {
  const { api } = props.shared;
  const [stored, setStored] = useState<Settings | undefined>();
  const [draft, setDraft] = useState<Draft | undefined>();
  const [refused, setRefused] = useState<ApiError | undefined>();
  const [note, setNote] = useState<{ kind: 'ok' | 'error'; text: string } | undefined>();

  useEffect(() => {
    api.settings().then(
      (s) => {
        setStored(s);
        setDraft(draftOf(s));
      },
      (err: unknown) => setNote({ kind: 'error', text: describeError(err) }),
    );
  }, [api]);

  if (!stored || !draft) return <p class="muted">Loading…</p>;
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const errorFor = (field: string) =>
    refused?.field === field ? refused.message.replace(/^[^:]+: /, '') : undefined;

  const save = async (e: Event) => {
    e.preventDefault();
    setRefused(undefined);
    const password = draft.clearPassword
      ? null
      : draft.obsPassword !== ''
        ? draft.obsPassword
        : { set: true };
    const input = {
      ...stored,
      obs: { url: draft.obsUrl.trim(), password },
      streamerbot: { url: draft.streamerbotUrl.trim() },
      tts: {
        ...stored.tts,
        maxChars: Number(draft.maxChars),
        blockedWords: draft.blockedWords
          .split(',')
          .map((w) => w.trim())
          .filter((w) => w !== ''),
        userCooldownMs: Number(draft.userCooldownMs),
      },
    } as SettingsInput;
    try {
      const saved = await api.saveSettings(input);
      setStored(saved);
      setDraft(draftOf(saved));
      setNote({ kind: 'ok', text: 'Saved. In force now.' });
    } catch (err) {
      if (err instanceof ApiError) setRefused(err);
      setNote({ kind: 'error', text: `Not saved: ${describeError(err)}` });
    }
  };

  return (
    <section aria-labelledby="settings-title">
      <div class="section-head">
        <h2 id="settings-title">Settings</h2>
      </div>
      <form class="card grid" onSubmit={save}>
        <Field
          id="set-obs-url"
          label="OBS WebSocket address (Tools → WebSocket Server Settings)"
          error={errorFor('obs.url')}
        >
          {(a) => (
            <input {...a} value={draft.obsUrl} onInput={(e) => set({ obsUrl: e.currentTarget.value })} />
          )}
        </Field>
        <Field id="set-obs-password" label="OBS WebSocket password" error={errorFor('obs.password')}>
          {(a) => (
            <input
              {...a}
              type="password"
              autocomplete="off"
              placeholder={stored.obs.password.set ? '(set: leave empty to keep it)' : '(none)'}
              value={draft.obsPassword}
              onInput={(e) => set({ obsPassword: e.currentTarget.value, clearPassword: false })}
            />
          )}
        </Field>
        {stored.obs.password.set && (
          <div class="field">
            <label class="check">
              <input
                type="checkbox"
                checked={draft.clearPassword}
                onChange={(e) => set({ clearPassword: e.currentTarget.checked, obsPassword: '' })}
              />
              Remove the stored password
            </label>
          </div>
        )}
        <Field id="set-sb-url" label="Streamer.bot HTTP server" error={errorFor('streamerbot.url')}>
          {(a) => (
            <input
              {...a}
              value={draft.streamerbotUrl}
              onInput={(e) => set({ streamerbotUrl: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field id="set-tts-max" label="Speech: longest text (characters)" error={errorFor('tts.maxChars')}>
          {(a) => (
            <input
              {...a}
              type="number"
              min={1}
              max={1000}
              value={draft.maxChars}
              onInput={(e) => set({ maxChars: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field
          id="set-tts-blocked"
          label="Speech: blocked words (comma separated)"
          error={errorFor('tts.blockedWords')}
        >
          {(a) => (
            <input
              {...a}
              value={draft.blockedWords}
              onInput={(e) => set({ blockedWords: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field
          id="set-tts-cooldown"
          label="Speech: per-viewer cooldown (ms)"
          error={errorFor('tts.userCooldownMs')}
        >
          {(a) => (
            <input
              {...a}
              type="number"
              min={0}
              value={draft.userCooldownMs}
              onInput={(e) => set({ userCooldownMs: e.currentTarget.value })}
            />
          )}
        </Field>
        <div class="row">
          <button type="submit" class="primary">
            Save settings
          </button>
        </div>
      </form>
      {note && <Notice kind={note.kind}>{note.text}</Notice>}
    </section>
  );
}
