// Settings (settings.json through /api/settings): OBS's address and password, Streamer.bot's address,
// and speech. The password is never shown: leave it empty to keep the one stored.
import { useEffect, useState } from 'preact/hooks';
import { backupFileName, type PendingRestore } from '../../../shared/backup.js';
import type { SettingsView as Settings, SettingsInput } from '../../../shared/settings.js';
import { ApiError, type ControlApi } from './api.js';
import { Field } from './fields.js';
import { useVoices, VoiceSelect } from './rules/action-card.js';
import type { Shared } from './shared-data.js';
import { describeError, Notice } from './ui.js';

interface Draft {
  obsUrl: string;
  obsPassword: string;
  clearPassword: boolean;
  streamerbotUrl: string;
  ttsEnabled: boolean;
  maxChars: string;
  blockedWords: string;
  userCooldownMs: string;
}

const draftOf = (s: Settings): Draft => ({
  obsUrl: s.obs.url,
  obsPassword: '',
  clearPassword: false,
  streamerbotUrl: s.streamerbot.url,
  ttsEnabled: s.tts.enabled,
  maxChars: String(s.tts.maxChars),
  blockedWords: s.tts.blockedWords.join(', '),
  userCooldownMs: String(s.tts.userCooldownMs),
});

/**
 * Export: a backup of everything but secrets; Import: checked now, put in place at the next start. An
 * import that waits is shown, with a way to cancel it.
 */
function Backups(props: { api: ControlApi }) {
  const [note, setNote] = useState<{ kind: 'ok' | 'error'; text: string } | undefined>();
  const [busy, setBusy] = useState(false);
  const [pending, setPending] = useState<PendingRestore>({ pending: false });
  const refreshPending = () =>
    props.api.pendingRestore().then(setPending, () => setPending({ pending: false }));
  useEffect(() => void refreshPending(), []);
  const cancelPending = async () => {
    setBusy(true);
    setNote(undefined);
    try {
      await props.api.cancelRestore();
      setNote({
        kind: 'ok',
        text: 'The imported backup was cancelled: nothing will change at the next start.',
      });
    } catch (err) {
      setNote({ kind: 'error', text: describeError(err) });
    } finally {
      await refreshPending();
      setBusy(false);
    }
  };
  const exportNow = async () => {
    setBusy(true);
    setNote(undefined);
    try {
      const blob = await props.api.download('/api/backup');
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = backupFileName(new Date());
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setNote({
        kind: 'ok',
        text: `Backup downloaded (${(blob.size / 1024).toFixed(0)} KiB, without secrets).`,
      });
    } catch (err) {
      setNote({ kind: 'error', text: describeError(err) });
    } finally {
      setBusy(false);
    }
  };
  const importFile = async (file: File | undefined) => {
    if (!file) return;
    setBusy(true);
    setNote(undefined);
    try {
      await props.api.importBackup(file);
      setNote({
        kind: 'ok',
        text: 'The backup was checked and is ready: restart overlay-daemon to put it in place (what is there now is kept under backups/ in the data directory).',
      });
    } catch (err) {
      setNote({ kind: 'error', text: `Not imported, nothing changed: ${describeError(err)}` });
    } finally {
      await refreshPending();
      setBusy(false);
    }
  };
  return (
    <section class="card grid" aria-labelledby="backup-title">
      <h3 id="backup-title">Backup</h3>
      <p class="muted">
        One file with your overlays, rules, media, settings (without secrets: the OBS password and the YouTube
        key stay here) and the event history.
      </p>
      {pending.pending && (
        <div class="row">
          <Notice kind="info">
            An imported backup (made {new Date(pending.createdAt).toLocaleString()}) waits: it is put in place
            when overlay-daemon next starts.
          </Notice>
          <button type="button" onClick={() => void cancelPending()} disabled={busy}>
            Cancel the import
          </button>
        </div>
      )}
      <div class="row">
        <button type="button" onClick={() => void exportNow()} disabled={busy}>
          Export a backup
        </button>
        <label class="upload">
          Import a backup
          <input
            type="file"
            accept=".tar.gz,.tgz,application/gzip"
            disabled={busy}
            onChange={(e) => {
              const input = e.currentTarget;
              void importFile(input.files?.[0]).then(() => {
                input.value = '';
              });
            }}
          />
        </label>
      </div>
      {note && <Notice kind={note.kind}>{note.text}</Notice>}
    </section>
  );
}

/** "Test connection": one attempt with the saved OBS settings, and what came of it. */
function ObsTest(props: { api: ControlApi }) {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ kind: 'ok' | 'error'; text: string } | undefined>();
  const test = async () => {
    setBusy(true);
    setResult(undefined);
    try {
      const r = await props.api.testObs();
      setResult(
        r.ok
          ? { kind: 'ok', text: `Connected to OBS ${r.obsVersion} (obs-websocket ${r.websocketVersion}).` }
          : { kind: 'error', text: `Could not connect: ${r.error}.` },
      );
    } catch (err) {
      setResult({ kind: 'error', text: describeError(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="field">
      <button type="button" onClick={() => void test()} disabled={busy}>
        {busy ? 'Connecting…' : 'Test the saved OBS connection'}
      </button>
      {result && <Notice kind={result.kind}>{result.text}</Notice>}
    </div>
  );
}

/** The speech engine of this computer, its voices, and a sample to hear one. */
function SpeechSample(props: { api: ControlApi }) {
  const voices = useVoices(props.api);
  const [voice, setVoice] = useState<string | undefined>();
  const [text, setText] = useState('Thank you for the rose!');
  const [sound, setSound] = useState<string | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const speak = async () => {
    setProblem(undefined);
    try {
      const sample = await props.api.speakSample({ text, ...(voice ? { voice } : {}) });
      setSound(sample.sound);
    } catch (err) {
      setProblem(describeError(err));
    }
  };
  return (
    <section class="card grid" aria-labelledby="tts-sample-title">
      <h3 id="tts-sample-title">Hear a voice</h3>
      <p class="muted">
        {voices === undefined
          ? 'Looking for the speech engine…'
          : voices.engine === null
            ? 'No speech engine was found on this computer: Speak actions fail until one is installed (docs/actions.md).'
            : `Speech engine: ${voices.engine}, ${voices.voices.length} voices.`}
      </p>
      <div class="field">
        <label for="tts-sample-voice">Voice</label>
        <VoiceSelect id="tts-sample-voice" api={props.api} value={voice} set={setVoice} />
      </div>
      <div class="field">
        <label for="tts-sample-text">Sample text</label>
        <input id="tts-sample-text" value={text} onInput={(e) => setText(e.currentTarget.value)} />
      </div>
      <div class="row">
        <button type="button" onClick={() => void speak()} disabled={voices?.engine === null}>
          Speak a sample
        </button>
        {sound && (
          // biome-ignore lint/a11y/useMediaCaption: the caption is the sample text just above
          <audio key={sound} src={sound} controls autoPlay data-sample />
        )}
      </div>
      {problem && <Notice kind="error">{problem}</Notice>}
    </section>
  );
}

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
        enabled: draft.ttsEnabled,
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
        <ObsTest api={api} />
        <Field id="set-sb-url" label="Streamer.bot HTTP server" error={errorFor('streamerbot.url')}>
          {(a) => (
            <input
              {...a}
              value={draft.streamerbotUrl}
              onInput={(e) => set({ streamerbotUrl: e.currentTarget.value })}
            />
          )}
        </Field>
        <div class="field">
          <label class="check">
            <input
              type="checkbox"
              checked={draft.ttsEnabled}
              onChange={(e) => set({ ttsEnabled: e.currentTarget.checked })}
            />
            Speech on (rules with a Speak action talk)
          </label>
        </div>
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
      <SpeechSample api={api} />
      <Backups api={api} />
    </section>
  );
}
