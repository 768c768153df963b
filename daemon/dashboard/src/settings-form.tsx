// The settings form, in named groups: OBS, Streamer.bot, speech, viewer points, chat commands, the event
// history, the TikFinity event feed. Each field says what is wrong with it in plain words once it was changed or left (or Save was
// pressed), and stops saying it as soon as the value is right. The OBS password is never shown: empty
// keeps it.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { type SettingsView as Settings, SettingsInput } from '../../../shared/settings.js';
import { ApiError, type ControlApi } from './api.js';
import { fieldIssues } from './field-issues.js';
import { Field, type FieldA11y, numberFromText } from './fields.js';
import { describeError, focusSoon, Notice } from './ui.js';

const POINT_FIELDS = [
  { key: 'perDiamond', label: 'Per unit of gift value (a diamond, a bit, a cent, a Kick)' },
  { key: 'perLike', label: 'Per like' },
  { key: 'perChat', label: 'Per chat message' },
  { key: 'perFollow', label: 'Per follow' },
  { key: 'perShare', label: 'Per share' },
] as const;
type PointKey = (typeof POINT_FIELDS)[number]['key'];

/** The built-in chat commands, as the form names them; their cooldowns are shown in seconds, kept in ms. */
const COMMANDS = [
  { key: 'points', label: 'Points command', about: "answers with the viewer's points" },
  { key: 'top', label: 'Top command', about: "answers with the stream's top three by points" },
] as const;
type CommandKey = (typeof COMMANDS)[number]['key'];
interface CommandDraft {
  enabled: boolean;
  trigger: string;
  text: string;
  cooldown: string;
  userCooldown: string;
}
const COMMAND_FIELDS = [
  ['trigger', 'trigger'],
  ['text', 'text'],
  ['cooldown', 'cooldownMs'],
  ['user-cooldown', 'userCooldownMs'],
] as const;

const COMMAND_PLACEHOLDERS =
  "Besides the rule placeholders ({user.nickname}, …), an answer can name {points}, the viewer's points on that platform over every stream, and {top}, the top three of this stream by points.";

const secondsText = (ms: number): string => String(ms / 1000);
/** Seconds typed → whole milliseconds (NaN stays NaN, so the schema's message shows). */
const msFromSecondsText = (text: string): number => Math.round(numberFromText(text) * 1000);

interface Draft {
  obsUrl: string;
  obsPassword: string;
  clearPassword: boolean;
  streamerbotUrl: string;
  ttsEnabled: boolean;
  maxChars: string;
  blockedWords: string;
  userCooldownMs: string;
  points: Record<PointKey, string>;
  commands: Record<CommandKey, CommandDraft>;
  retentionDays: string;
  tikfinityEnabled: boolean;
  tikfinityPort: string;
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
  points: {
    perDiamond: String(s.points.perDiamond),
    perLike: String(s.points.perLike),
    perChat: String(s.points.perChat),
    perFollow: String(s.points.perFollow),
    perShare: String(s.points.perShare),
  },
  commands: {
    points: commandDraftOf(s.commands.points),
    top: commandDraftOf(s.commands.top),
  },
  retentionDays: String(s.journal.retentionDays),
  tikfinityEnabled: s.tikfinityFeed.enabled,
  tikfinityPort: String(s.tikfinityFeed.port),
});

function commandDraftOf(c: Settings['commands']['points']): CommandDraft {
  return {
    enabled: c.enabled,
    trigger: c.trigger,
    text: c.text,
    cooldown: secondsText(c.cooldownMs),
    userCooldown: secondsText(c.userCooldownMs),
  };
}

const commandOf = (d: CommandDraft): Settings['commands']['points'] => ({
  enabled: d.enabled,
  trigger: d.trigger,
  text: d.text,
  cooldownMs: msFromSecondsText(d.cooldown),
  userCooldownMs: msFromSecondsText(d.userCooldown),
});

/** The document PUT sends: the stored settings with the form's values (sources and keys untouched). */
function inputOf(stored: Settings, draft: Draft): SettingsInput {
  const password = draft.clearPassword ? null : draft.obsPassword !== '' ? draft.obsPassword : { set: true };
  return {
    ...stored,
    obs: { url: draft.obsUrl.trim(), password },
    streamerbot: { url: draft.streamerbotUrl.trim() },
    tts: {
      ...stored.tts,
      enabled: draft.ttsEnabled,
      maxChars: numberFromText(draft.maxChars),
      blockedWords: draft.blockedWords
        .split(',')
        .map((w) => w.trim())
        .filter((w) => w !== ''),
      userCooldownMs: numberFromText(draft.userCooldownMs),
    },
    points: {
      perDiamond: numberFromText(draft.points.perDiamond),
      perLike: numberFromText(draft.points.perLike),
      perChat: numberFromText(draft.points.perChat),
      perFollow: numberFromText(draft.points.perFollow),
      perShare: numberFromText(draft.points.perShare),
    },
    commands: { points: commandOf(draft.commands.points), top: commandOf(draft.commands.top) },
    journal: { ...stored.journal, retentionDays: numberFromText(draft.retentionDays) },
    tikfinityFeed: { enabled: draft.tikfinityEnabled, port: numberFromText(draft.tikfinityPort) },
  };
}

/** Each field's control id and the settings path its message is about. */
const FIELD_PATHS: Record<string, string> = {
  'set-obs-url': 'obs.url',
  'set-obs-password': 'obs.password',
  'set-sb-url': 'streamerbot.url',
  'set-tts-max': 'tts.maxChars',
  'set-tts-blocked': 'tts.blockedWords',
  'set-tts-cooldown': 'tts.userCooldownMs',
  'set-journal-days': 'journal.retentionDays',
  'set-tikfinity-port': 'tikfinityFeed.port',
  ...Object.fromEntries(POINT_FIELDS.map((f) => [`set-points-${f.key}`, `points.${f.key}`])),
  ...Object.fromEntries(
    COMMANDS.flatMap((c) =>
      COMMAND_FIELDS.map(([id, key]) => [`set-cmd-${c.key}-${id}`, `commands.${c.key}.${key}`]),
    ),
  ),
};

function Group(props: { title: string; children: ComponentChildren }) {
  return (
    <fieldset class="settings-group">
      <legend>{props.title}</legend>
      {props.children}
    </fieldset>
  );
}

export function SettingsForm(props: { api: ControlApi; obsTest: ComponentChildren }) {
  const { api } = props;
  const [stored, setStored] = useState<Settings | undefined>();
  const [draft, setDraft] = useState<Draft | undefined>();
  /** The daemon's refusal of one field, and the value it refused (it goes once the value changes). */
  const [refused, setRefused] = useState<{ error: ApiError; input: SettingsInput } | undefined>();
  /** The outcome line; with `at`, it takes the keyboard (a new `at` each time). */
  const [note, setNote] = useState<{ kind: 'ok' | 'error'; text: string; at?: number } | undefined>();
  const [touched, setTouched] = useState<ReadonlySet<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);

  useEffect(() => {
    api.settings().then(
      (s) => {
        setStored(s);
        setDraft(draftOf(s));
      },
      (err: unknown) => setNote({ kind: 'error', text: describeError(err) }),
    );
  }, [api]);

  if (!stored || !draft)
    return note ? <Notice kind={note.kind}>{note.text}</Notice> : <p class="muted">Loading…</p>;

  const input = inputOf(stored, draft);
  const issues = fieldIssues(SettingsInput, input);
  const valueAt = (value: unknown, path: string) =>
    path
      .split('.')
      .reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as never)[k] : undefined), value);
  const errorFor = (id: string) => {
    const path = FIELD_PATHS[id] ?? '';
    if (
      refused?.error.field === path &&
      JSON.stringify(valueAt(refused.input, path)) === JSON.stringify(valueAt(input, path))
    )
      return refused.error.message.replace(/^[^:]+: /, '');
    return submitted || touched.has(id) ? issues.get(path) : undefined;
  };
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const touch = (e: Event) => {
    const id = e.target instanceof HTMLElement ? e.target.id : '';
    if (id in FIELD_PATHS && !touched.has(id)) setTouched((s) => new Set(s).add(id));
  };

  const save = async (e: Event) => {
    e.preventDefault();
    setSubmitted(true);
    const firstProblem = Object.keys(FIELD_PATHS).find((id) => issues.has(FIELD_PATHS[id] ?? ''));
    if (firstProblem) {
      // The keyboard goes to the field to fix; the line says why nothing was saved.
      setNote({ kind: 'error', text: 'Not saved: a field above needs a change.' });
      focusSoon(() => document.getElementById(firstProblem));
      return;
    }
    try {
      const saved = await api.saveSettings(input);
      setStored(saved);
      setDraft(draftOf(saved));
      setRefused(undefined);
      setSubmitted(false);
      setTouched(new Set());
      setNote({ kind: 'ok', text: 'Saved. In force now.', at: Date.now() });
    } catch (err) {
      if (err instanceof ApiError) setRefused({ error: err, input });
      setNote({ kind: 'error', text: `Not saved: ${describeError(err)}`, at: Date.now() });
    }
  };

  const text = (id: string, label: string, value: string, onValue: (v: string) => void, extra = {}) => (
    <Field id={id} label={label} error={errorFor(id)}>
      {(a: FieldA11y) => (
        <input {...a} {...extra} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
      )}
    </Field>
  );
  const number = (id: string, label: string, value: string, onValue: (v: string) => void, min = 0) =>
    text(id, label, value, onValue, { type: 'number', min, step: 'any' });

  return (
    <>
      <form class="card settings-form" onSubmit={save} onFocusOut={touch} onInput={touch} noValidate>
        <Group title="OBS">
          {text(
            'set-obs-url',
            'OBS WebSocket address (Tools → WebSocket Server Settings)',
            draft.obsUrl,
            (v) => set({ obsUrl: v }),
          )}
          {/* Secrets change on the streamer's computer only (decisions-3 §11): a device's saves keep them. */}
          {api.changesSecrets &&
            text(
              'set-obs-password',
              'OBS WebSocket password',
              draft.obsPassword,
              (v) => set({ obsPassword: v, clearPassword: false }),
              {
                type: 'password',
                autocomplete: 'off',
                placeholder: stored.obs.password.set ? '(set: leave empty to keep it)' : '(none)',
              },
            )}
          {api.changesSecrets && stored.obs.password.set && (
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
          {props.obsTest}
        </Group>
        <Group title="Streamer.bot">
          {text('set-sb-url', 'Streamer.bot HTTP server', draft.streamerbotUrl, (v) =>
            set({ streamerbotUrl: v }),
          )}
        </Group>
        <Group title="Speech">
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
          {number(
            'set-tts-max',
            'Speech: longest text (characters)',
            draft.maxChars,
            (v) => set({ maxChars: v }),
            1,
          )}
          {text('set-tts-blocked', 'Speech: blocked words (comma separated)', draft.blockedWords, (v) =>
            set({ blockedWords: v }),
          )}
          {number('set-tts-cooldown', 'Speech: per-viewer cooldown (ms)', draft.userCooldownMs, (v) =>
            set({ userCooldownMs: v }),
          )}
        </Group>
        <Group title="Viewer points">
          <p class="muted">
            What a viewer earns for each thing they do; top-gifters widgets ranked by points add them up.
          </p>
          {POINT_FIELDS.map((f) =>
            number(`set-points-${f.key}`, `Points: ${f.label.toLowerCase()}`, draft.points[f.key], (v) =>
              set({ points: { ...draft.points, [f.key]: v } }),
            ),
          )}
        </Group>
        <Group title="Chat commands">
          <p class="muted">
            A viewer who starts a chat message with a trigger gets an answer in that chat, sent as you (sign
            in to Twitch, Kick or YouTube to send; TikTok does not allow it). {COMMAND_PLACEHOLDERS}
          </p>
          {COMMANDS.map((c) => {
            const cmd = draft.commands[c.key];
            const setCmd = (patch: Partial<CommandDraft>) =>
              set({ commands: { ...draft.commands, [c.key]: { ...cmd, ...patch } } });
            const id = (field: string) => `set-cmd-${c.key}-${field}`;
            return (
              <div key={c.key}>
                <div class="field">
                  <label class="check">
                    <input
                      type="checkbox"
                      checked={cmd.enabled}
                      onChange={(e) => setCmd({ enabled: e.currentTarget.checked })}
                    />
                    {c.label} on ({c.about})
                  </label>
                </div>
                {text(id('trigger'), `${c.label}: trigger (one word, any case)`, cmd.trigger, (v) =>
                  setCmd({ trigger: v }),
                )}
                {text(id('text'), `${c.label}: answer`, cmd.text, (v) => setCmd({ text: v }))}
                {number(id('cooldown'), `${c.label}: seconds between two answers`, cmd.cooldown, (v) =>
                  setCmd({ cooldown: v }),
                )}
                {number(
                  id('user-cooldown'),
                  `${c.label}: seconds before answering the same viewer again`,
                  cmd.userCooldown,
                  (v) => setCmd({ userCooldown: v }),
                )}
              </div>
            );
          })}
        </Group>
        <Group title="Event history">
          {number(
            'set-journal-days',
            'Keep events for (days; older ones are removed at start and every six hours)',
            draft.retentionDays,
            (v) => set({ retentionDays: v }),
            1,
          )}
        </Group>
        <Group title="TikFinity event feed">
          <p class="muted">
            For games and widgets made for TikFinity: they connect to ws://127.0.0.1 on this port and get
            every event of every platform in TikFinity's format. Only programs on this computer can connect.
          </p>
          <div class="field">
            <label class="check">
              <input
                id="set-tikfinity-enabled"
                type="checkbox"
                checked={draft.tikfinityEnabled}
                onChange={(e) => set({ tikfinityEnabled: e.currentTarget.checked })}
              />
              TikFinity event feed on
            </label>
          </div>
          {number(
            'set-tikfinity-port',
            'TikFinity event feed: port (TikFinity uses 21213; it must not run at the same time)',
            draft.tikfinityPort,
            (v) => set({ tikfinityPort: v }),
            1,
          )}
        </Group>
        <div class="row">
          <button type="submit" class="primary">
            Save settings
          </button>
        </div>
      </form>
      {note && (
        <Notice kind={note.kind} focus={note.at}>
          {note.text}
        </Notice>
      )}
    </>
  );
}
