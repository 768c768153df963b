// Sources: the live channels the daemon reads events from (settings.json's `sources`
// with each one's state from /status, and those given on the command line), adding, turning off and
// removing one, the Twitch sign-in and client id, and the YouTube API key (never shown back).
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { CredentialOrigin, CredentialsReport } from '../../../shared/credentials.js';
import { PLATFORM_NAMES } from '../../../shared/platforms.js';
import type { KickLinkState, SourceReport, TwitchSignIn } from '../../../shared/protocol/index.js';
import {
  channelProblem,
  MAX_SOURCES,
  normaliseChannel,
  type SettingsView as Settings,
  SettingsInput,
  SOURCE_PLATFORMS,
  type SourceEntry,
  type SourcePlatform,
} from '../../../shared/settings.js';
import { ApiError, type ControlApi } from './api.js';
import { fieldIssues } from './field-issues.js';
import { Field, optionalNumberFromText } from './fields.js';
import type { Shared } from './shared-data.js';
import { ConfirmButton, describeError, Notice, PlatformMark } from './ui.js';
import { usePolling } from './use-polling.js';

const POLL_MS = 3000;
/** How often a Twitch sign-in under way is asked about: the person is typing a code elsewhere. */
const SIGN_IN_POLL_MS = 2000;
/** How often the Kick box asks about the events socket while it is not open. */
const KICK_EVENTS_POLL_MS = 3000;

/** Why a row has no controls. */
const COMMAND_LINE_NOTE =
  'Given when overlay-daemon started (--tiktok, --twitch, --youtube, --kick): for this run only';

type Note = { kind: 'ok' | 'error'; text: string };
type Channel = { platform: SourcePlatform; channel: string; chatroomId?: number };

/** Two spellings of one channel (`@Name` and `name` on TikTok) are the same source. */
const sameSource = (a: Channel, b: Channel) =>
  a.platform === b.platform &&
  normaliseChannel(a.platform, a.channel) === normaliseChannel(b.platform, b.channel);

/** A channel as its platform shows it: TikTok names with their @. */
const channelText = (s: Channel) => (s.platform === 'tiktok' ? `@${s.channel}` : s.channel);

/** "Twitch somechannel": a source in a sentence, spelt as the daemon stores it. */
const sourceName = (s: Channel) =>
  `${PLATFORM_NAMES[s.platform]} ${channelText({ ...s, channel: normaliseChannel(s.platform, s.channel) })}`;

const TIME = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' });
const DAY_AND_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** "since 14:02" today, with the date on another day. */
function sinceText(iso: string | undefined): string | undefined {
  if (!iso) return undefined;
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return undefined;
  const today = at.toDateString() === new Date().toDateString();
  return `since ${(today ? TIME : DAY_AND_TIME).format(at)}`;
}

/** A source's state in a streamer's words; waiting and trouble say why in the same breath. */
function stateWords(report: SourceReport): string {
  switch (report.state) {
    case 'connecting':
      return 'Connecting…';
    case 'connected':
      return 'Connected';
    case 'reconnecting':
      // A drop or a platform out of reach alike; the detail says which.
      return 'Not connected: trying again';
    case 'backoff':
      return report.detail ? `Waiting (${report.detail})` : 'Waiting before the next try';
    case 'error':
      return `Needs attention: ${report.detail ?? 'see the daemon’s log'}`;
    case 'offline':
      return 'Not live right now';
    case 'off':
      return 'Turned off';
  }
}

/** The detail the words above do not already carry. */
const extraDetail = (report: SourceReport) =>
  report.state === 'backoff' || report.state === 'error' || report.state === 'off'
    ? undefined
    : report.detail;

/** The state of one source, its detail and since when; `pending` while /status has not listed it yet. */
export function SourceStateLabel(props: { report: SourceReport | undefined; pending?: string }) {
  const { report } = props;
  if (!report) return <span class="source-state muted">{props.pending ?? '…'}</span>;
  const detail = extraDetail(report);
  const since = sinceText(report.since);
  return (
    <span class="source-state" data-state={report.state}>
      <span class={`state-words state-${report.state}`}>{stateWords(report)}</span>
      {detail && <span class="muted"> — {detail}</span>}
      {since && <span class="muted source-since"> · {since}</span>}
    </span>
  );
}

/** What to type for each platform. */
const CHANNEL_HINTS: Record<SourcePlatform, { placeholder: string; hint: string }> = {
  tiktok: { placeholder: '@username', hint: 'The TikTok username, with or without its @.' },
  twitch: { placeholder: 'channelname', hint: 'The channel name, as in twitch.tv/channelname.' },
  youtube: {
    placeholder: '@handle or UC…',
    hint: 'The channel’s handle (@name) or its channel id (UC followed by 22 characters).',
  },
  kick: {
    placeholder: 'channelname',
    hint: 'The channel name, as in kick.com/channelname. Chat is read over Kick’s own chat socket.',
  },
};

/** The message beside the channel field before anything is sent: empty, misspelt, or listed already. */
function channelIssue(entry: Channel, existing: readonly SourceEntry[]): string | undefined {
  const channel = entry.channel.trim();
  if (channel === '') return 'must not be empty';
  const problem = channelProblem(entry.platform, channel);
  if (problem) return problem;
  if (existing.some((e) => sameSource(e, { ...entry, channel })))
    return `${sourceName({ ...entry, channel })} is already in the list`;
  return undefined;
}

/** A Kick chatroom id as typed: its problem in the settings' own words, or none (empty is none). */
function chatroomIdIssue(text: string): string | undefined {
  const chatroomId = optionalNumberFromText(text);
  if (chatroomId === undefined) return undefined;
  return fieldIssues(SettingsInput, { sources: [{ platform: 'kick', channel: 'kick', chatroomId }] }).get(
    'sources.0.chatroomId',
  );
}

const CHATROOM_ID_HINT =
  'Only when Kick’s site refuses to give it: open kick.com/api/v2/channels/<channel> in a browser and copy the number after "chatroom": {"id":.';

/** Adds one channel; the daemon's refusal is shown beside the field it names. */
function AddSource(props: {
  existing: readonly SourceEntry[];
  add: (entry: Channel) => Promise<{ refused: ApiError; index: number } | undefined>;
}) {
  const [platform, setPlatform] = useState<SourcePlatform>('tiktok');
  const [channel, setChannel] = useState('');
  const [chatroomText, setChatroomText] = useState('');
  const [tried, setTried] = useState(false);
  const [busy, setBusy] = useState(false);
  const [refused, setRefused] = useState<{
    field: 'platform' | 'channel' | 'chatroomId' | undefined;
    message: string;
  }>();

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
    const { refused: err, index } = outcome;
    const message = err.message.replace(/^[^:]+: /, '');
    const field =
      err.field === `sources.${index}.channel`
        ? 'channel'
        : err.field === `sources.${index}.platform`
          ? 'platform'
          : err.field === `sources.${index}.chatroomId`
            ? 'chatroomId'
            : undefined;
    setRefused({ field, message: field ? message : describeError(err) });
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
function SourceRow(props: {
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

/** The sign-in under way: the code to type, the page to type it on, asked about until it ends. */
function PendingSignIn(props: {
  signIn: TwitchSignIn;
  refresh: () => Promise<void>;
  expired: () => void;
  cancel: () => void;
}) {
  const { signIn, refresh, expired } = props;
  usePolling(refresh, SIGN_IN_POLL_MS);
  useEffect(() => {
    if (!signIn.expiresAt) return;
    const timer = setTimeout(expired, Math.max(0, Date.parse(signIn.expiresAt) - Date.now()));
    return () => clearTimeout(timer);
  }, [signIn.expiresAt, expired]);
  return (
    <div class="device-code">
      <p>
        Open{' '}
        {signIn.verificationUri ? (
          <a href={signIn.verificationUri} target="_blank" rel="noreferrer noopener">
            {signIn.verificationUri}
          </a>
        ) : (
          'Twitch’s activation page'
        )}
        , sign in as the channel’s owner, and enter this code:
      </p>
      <output class="user-code" aria-label="Code to enter on Twitch">
        {signIn.userCode}
      </output>
      <p class="muted">
        Waiting for Twitch…
        {signIn.expiresAt && ` The code works until ${TIME.format(new Date(signIn.expiresAt))}.`}
      </p>
      <button type="button" class="quiet" onClick={props.cancel}>
        Cancel
      </button>
    </div>
  );
}

/** A refusal of the sign-in routes in words: a daemon without them says how to sign in otherwise. */
function signInProblem(err: unknown): string {
  if (err instanceof ApiError && err.status === 404)
    return (
      'This daemon cannot sign in to Twitch from the dashboard: run “overlay-daemon connect twitch” ' +
      'in a terminal instead.'
    );
  return describeError(err);
}

/**
 * A button's action: busy while it runs, the last problem cleared first and set, in words, if it fails.
 */
function busyAction(
  setBusy: (busy: boolean) => void,
  setProblem: (problem: string | undefined) => void,
  describe: (err: unknown) => string,
) {
  return async (run: () => Promise<void>) => {
    setBusy(true);
    setProblem(undefined);
    try {
      await run();
    } catch (err) {
      setProblem(describe(err));
    } finally {
      setBusy(false);
    }
  };
}

/** Twitch: the sign-in that adds follows, subscriptions, cheers and raids, and the client id it uses. */
function TwitchBox(props: { api: ControlApi; settings: Settings; saved: (s: Settings) => void }) {
  const { api, settings } = props;
  const [signIn, setSignIn] = useState<TwitchSignIn>();
  const [problem, setProblem] = useState<string>();
  const [expiredCode, setExpiredCode] = useState<string>();
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      setSignIn(await api.twitchSignIn());
      setProblem(undefined);
    } catch (err) {
      setProblem(signInProblem(err));
    }
  }, [api]);
  useEffect(() => void load(), [load]);

  const act = busyAction(setBusy, setProblem, signInProblem);
  const connect = () =>
    act(async () => {
      setExpiredCode(undefined);
      setSignIn(await api.startTwitchSignIn());
    });
  const disconnect = () =>
    act(async () => {
      await api.endTwitchSignIn();
      await load();
    });
  const expired = useCallback(() => setExpiredCode(signIn?.userCode), [signIn?.userCode]);

  const state = signIn?.state;
  const pending = state === 'pending' && signIn?.userCode !== expiredCode;
  return (
    <section class="card" aria-labelledby="twitch-title" data-part="twitch">
      <h3 id="twitch-title">
        <PlatformMark platform="twitch" />
        Twitch
      </h3>
      <div data-part="twitch-sign-in" data-state={pending ? 'pending' : (state ?? 'unknown')}>
        {signIn === undefined && !problem && <p class="muted">Asking the daemon…</p>}
        {state === 'signed-in' && (
          <>
            <p>
              <span class="yes">Connected</span> as <strong>{signIn?.login ?? 'your account'}</strong>:
              follows, subscriptions, cheers, raids and viewer counts arrive with the chat.
            </p>
            {signIn?.renew && (
              <>
                <Notice kind="info">Sending chat: {signIn.renew}.</Notice>
                <button type="button" class="primary" disabled={busy} onClick={() => void connect()}>
                  Sign in again
                </button>{' '}
              </>
            )}
            <button type="button" class="danger" disabled={busy} onClick={() => void disconnect()}>
              Disconnect
            </button>
          </>
        )}
        {signIn && pending && (
          <PendingSignIn signIn={signIn} refresh={load} expired={expired} cancel={() => void disconnect()} />
        )}
        {signIn && (state === 'signed-out' || state === 'failed' || (state === 'pending' && !pending)) && (
          <>
            {state === 'failed' && (
              <Notice kind="error">
                The last sign-in did not complete: {signIn.error ?? 'no reason given'}.
              </Notice>
            )}
            {state === 'pending' && <Notice kind="error">The code expired before it was entered.</Notice>}
            <p>
              Chat is read without signing in. Connect Twitch to also get follows, subscriptions, cheers,
              raids and viewer counts.
            </p>
            <button type="button" class="primary" disabled={busy} onClick={() => void connect()}>
              Connect Twitch
            </button>
          </>
        )}
        {problem && <Notice kind="error">{problem}</Notice>}
      </div>
      <TwitchClientId api={api} settings={settings} saved={props.saved} />
    </section>
  );
}

/** The Twitch application the sign-in and the viewer counts use: the Gatekeeper's config may give one. */
function TwitchClientId(props: { api: ControlApi; settings: Settings; saved: (s: Settings) => void }) {
  const [clientId, setClientId] = useState(props.settings.twitch.clientId ?? '');
  const [refused, setRefused] = useState<string>();
  const [note, setNote] = useState<Note>();
  const trimmed = clientId.trim();
  const issue = fieldIssues(SettingsInput, { twitch: trimmed ? { clientId: trimmed } : {} }).get(
    'twitch.clientId',
  );

  const save = async (e: Event) => {
    e.preventDefault();
    setRefused(undefined);
    setNote(undefined);
    if (issue) return;
    try {
      const saved = await props.api.changeSettings((s) => {
        const { clientId: _old, ...twitch } = s.twitch;
        return { ...s, twitch: trimmed ? { ...twitch, clientId: trimmed } : twitch };
      });
      props.saved(saved);
      setNote({ kind: 'ok', text: 'Saved.' });
    } catch (err) {
      if (err instanceof ApiError && err.field === 'twitch.clientId')
        setRefused(err.message.replace(/^[^:]+: /, ''));
      else setNote({ kind: 'error', text: `Not saved: ${describeError(err)}` });
    }
  };
  return (
    <form onSubmit={save} noValidate>
      <Field id="twitch-client-id" label="Twitch client id (optional)" error={issue ?? refused}>
        {(a) => (
          <input
            {...a}
            value={clientId}
            autocomplete="off"
            spellcheck={false}
            placeholder="(from the Gatekeeper’s config)"
            onInput={(e) => {
              setClientId(e.currentTarget.value);
              setRefused(undefined);
            }}
          />
        )}
      </Field>
      <p class="muted hint">
        Leave it empty to use the one the Gatekeeper’s config supplies, when it does. To use your own,
        register an application at dev.twitch.tv/console (client type Public) and paste its Client ID.
      </p>
      <div class="row">
        <button type="submit">Save client id</button>
      </div>
      {note && <Notice kind={note.kind}>{note.text}</Notice>}
    </form>
  );
}

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

/**
 * Kick: its follows, subscriptions, gifts and chat come as webhooks to the Gatekeeper, which keeps them
 * for the daemon once the streamer links Kick there (the same link as `overlay-daemon connect kick`).
 */
function KickBox(props: { api: ControlApi }) {
  const { api } = props;
  const [link, setLink] = useState<KickLinkState>();
  /** The page on Kick to allow the link on, while a link is under way. */
  const [opening, setOpening] = useState<string>();
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      const state = await api.kickLink();
      setLink(state);
      setProblem(undefined);
      if (state.connected) setOpening(undefined);
    } catch (err) {
      setProblem(describeError(err));
    }
  }, [api]);
  useEffect(() => void load(), [load]);
  const act = busyAction(setBusy, setProblem, describeError);
  const connect = () =>
    act(async () => {
      const { url } = await api.startKickLink();
      setOpening(url);
      window.open(url, '_blank', 'noopener,noreferrer');
    });
  const disconnect = () =>
    act(async () => {
      await api.endKickLink();
      await load();
    });
  return (
    <section class="card" aria-labelledby="kick-title" data-part="kick">
      <h3 id="kick-title">
        <PlatformMark platform="kick" />
        Kick
      </h3>
      <div
        data-part="kick-link"
        data-state={link?.connected ? 'connected' : opening ? 'pending' : 'not-connected'}
      >
        {link === undefined && !problem && <p class="muted">Asking the daemon…</p>}
        {link?.connected && (
          <>
            {!link.eventsConnected && <KeepAsking refresh={load} />}
            <p>
              <span class="yes">Connected</span>
              {link.channel && (
                <>
                  {' '}
                  as <strong>kick.com/{link.channel}</strong>
                </>
              )}
              : follows, subscriptions and gifts come through the Gatekeeper, also those sent while the daemon
              was off (for 24 hours).
            </p>
            <p class="muted">{link.events}</p>
            <button type="button" class="danger" disabled={busy} onClick={() => void disconnect()}>
              Disconnect Kick
            </button>
          </>
        )}
        {link && !link.connected && opening && <PendingKickLink url={opening} refresh={load} />}
        {link && !link.connected && !opening && (
          <>
            <p>
              Chat is read without connecting. Connect Kick (it needs the membership sign-in) to also get
              follows, subscriptions and gifts, even those sent while the daemon was off.
            </p>
            <button type="button" class="primary" disabled={busy} onClick={() => void connect()}>
              Connect Kick
            </button>
          </>
        )}
        {problem && <Notice kind="error">{problem}</Notice>}
      </div>
    </section>
  );
}

/** While the events socket is not open yet (or is being opened again), the box asks now and then. */
function KeepAsking(props: { refresh: () => Promise<void> }) {
  usePolling(props.refresh, KICK_EVENTS_POLL_MS);
  return null;
}

/** A link under way: the page to allow it on, asked about until Kick says yes. */
function PendingKickLink(props: { url: string; refresh: () => Promise<void> }) {
  usePolling(props.refresh, SIGN_IN_POLL_MS);
  return (
    <p>
      Allow the link on{' '}
      <a href={props.url} target="_blank" rel="noreferrer noopener">
        Kick’s page
      </a>{' '}
      as the channel’s owner. Waiting for Kick…
    </p>
  );
}

/** YouTube: the Data API key live chats are read with; the page learns only whether one is set. */
function YouTubeBox(props: {
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

export function SourcesView(props: { shared: Shared }) {
  const { api } = props.shared;
  const [settings, setSettings] = useState<Settings>();
  const [reports, setReports] = useState<SourceReport[]>();
  const [credentials, setCredentials] = useState<CredentialsReport>();
  const [error, setError] = useState<string>();
  const [note, setNote] = useState<Note>();

  // settings.json may change elsewhere (by hand, another tab): both are read again on every poll.
  const load = useCallback(async () => {
    const [s, st] = await Promise.allSettled([api.settings(), api.status()]);
    if (s.status === 'fulfilled') setSettings(s.value);
    if (st.status === 'fulfilled') setReports(st.value.sources ?? []);
    const failed = [s, st].find((r): r is PromiseRejectedResult => r.status === 'rejected');
    setError(failed ? describeError(failed.reason) : undefined);
    // Where the key in force comes from; an older daemon does not say (the box then says set or not).
    setCredentials(await api.credentials().catch(() => undefined));
  }, [api]);
  usePolling(load, POLL_MS);

  /** Changes the list as the daemon has it now and puts it in force; a refusal comes back to the caller. */
  const changeSources = async (
    edit: (sources: SourceEntry[]) => SourceEntry[],
    done: string,
  ): Promise<ApiError | undefined> => {
    setNote(undefined);
    try {
      const saved = await api.changeSettings((s) => ({ ...s, sources: edit(s.sources) }));
      setSettings(saved);
      setNote({ kind: 'ok', text: done });
      void load();
      return undefined;
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) return err;
      setNote({ kind: 'error', text: `Not saved: ${describeError(err)}` });
      return undefined;
    }
  };

  const add = async (entry: Channel) => {
    let index = 0;
    const refused = await changeSources(
      (sources) => {
        index = sources.length;
        return [...sources, { ...entry, enabled: true }];
      },
      `Added ${sourceName(entry)}: the daemon is connecting to it.`,
    );
    return refused ? { refused, index } : undefined;
  };
  const edited = async (edit: (sources: SourceEntry[]) => SourceEntry[], done: string) => {
    const refused = await changeSources(edit, done);
    if (refused) setNote({ kind: 'error', text: `Not saved: ${describeError(refused)}` });
  };
  const toggle = (entry: SourceEntry) =>
    void edited(
      (sources) => sources.map((s) => (sameSource(s, entry) ? { ...s, enabled: !entry.enabled } : s)),
      `${sourceName(entry)} turned ${entry.enabled ? 'off' : 'on'}.`,
    );
  const remove = (entry: SourceEntry) =>
    void edited((sources) => sources.filter((s) => !sameSource(s, entry)), `${sourceName(entry)} removed.`);
  const setChatroomId = async (entry: SourceEntry, chatroomId: number | undefined) => {
    const refused = await changeSources(
      (sources) =>
        sources.map((s) => {
          if (!sameSource(s, entry)) return s;
          const { chatroomId: _old, ...rest } = s;
          return chatroomId === undefined ? rest : { ...rest, chatroomId };
        }),
      chatroomId === undefined
        ? `${sourceName(entry)}: chatroom id removed.`
        : `${sourceName(entry)}: chatroom id ${chatroomId} saved; the source starts again with it.`,
    );
    return refused ? describeError(refused) : undefined;
  };

  if (!settings) return error ? <Notice kind="error">{error}</Notice> : <p class="muted">Loading…</p>;

  const reportOf = (entry: Channel) => reports?.find((r) => sameSource(r, entry));
  // `--twitch` and friends run for this run only: /status lists them, settings.json does not.
  const fromCommandLine = (reports ?? []).filter((r) => !settings.sources.some((e) => sameSource(e, r)));
  const empty = settings.sources.length === 0 && fromCommandLine.length === 0;

  return (
    <section aria-labelledby="sources-title">
      <div class="section-head">
        <h1 id="sources-title" tabIndex={-1}>
          Sources
        </h1>
        <span class="muted">refreshes every {POLL_MS / 1000} s</span>
      </div>
      <p class="muted">
        The live channels events come from. Several can run at once; a change is in force as soon as it is
        saved.
      </p>
      {error && <Notice kind="error">{error}</Notice>}
      <div class="card">
        <h3>Channels</h3>
        {empty ? (
          <p class="muted">No source yet: add your TikTok, Twitch, YouTube or Kick channel below.</p>
        ) : (
          <table class="sources">
            <thead>
              <tr>
                <th scope="col">Platform</th>
                <th scope="col">Channel</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span class="visually-hidden">Controls</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {settings.sources.map((entry) => (
                <SourceRow
                  key={`${entry.platform}:${entry.channel}`}
                  entry={entry}
                  report={reportOf(entry)}
                  toggle={() => toggle(entry)}
                  remove={() => remove(entry)}
                  setChatroomId={(chatroomId) => setChatroomId(entry, chatroomId)}
                />
              ))}
              {fromCommandLine.map((r) => (
                <tr
                  key={`${r.platform}:${r.channel}`}
                  data-source={`${r.platform}:${r.channel}`}
                  data-from="command-line"
                >
                  <td>
                    <PlatformMark platform={r.platform} />
                    {PLATFORM_NAMES[r.platform]}
                  </td>
                  <td class="source-channel">{channelText(r)}</td>
                  <td>
                    <SourceStateLabel report={r} />
                  </td>
                  <td class="muted" title={COMMAND_LINE_NOTE}>
                    from the command line
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {note && <Notice kind={note.kind}>{note.text}</Notice>}
      </div>
      <AddSource existing={settings.sources} add={add} />
      <div class="platform-boxes">
        <TwitchBox api={api} settings={settings} saved={setSettings} />
        <KickBox api={api} />
        <YouTubeBox api={api} settings={settings} saved={setSettings} origin={credentials?.youtubeApiKey} />
      </div>
    </section>
  );
}
