// Settings (settings.json through /api/settings): the form's groups (OBS, Streamer.bot, speech, viewer
// points, chat commands, event history; settings-form.tsx), a voice sample, and backups.
import { useEffect, useState } from 'preact/hooks';
import { backupFileName, type PendingRestore } from '../../../shared/backup.js';
import type { ControlApi } from './api.js';
import { DevicesPanel } from './devices-panel.js';
import { useVoices, VoiceSelect } from './rules/kinds/speak.js';
import { SettingsForm } from './settings-form.js';
import type { Shared } from './shared-data.js';
import { describeError, Notice } from './ui.js';

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
      // Gone now: the notice that it waits goes with the words that say so, not after the next check.
      setPending({ pending: false });
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
  return (
    <section aria-labelledby="settings-title">
      <div class="section-head">
        <h1 id="settings-title" tabIndex={-1}>
          Settings
        </h1>
      </div>
      <SettingsForm api={api} obsTest={<ObsTest api={api} />} />
      <SpeechSample api={api} />
      {/* Backups and paired devices are the admin key's alone, not a paired device's (decisions-3 §11). */}
      {api.allows('GET', '/api/backup') && <Backups api={api} />}
      {api.allows('GET', '/api/devices') && <DevicesPanel api={api} />}
    </section>
  );
}
