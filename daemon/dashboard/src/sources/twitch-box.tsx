// Twitch in the Sources view: the sign-in that adds follows, subscriptions, cheers and raids (a code typed on
// Twitch's page), and the client id it uses.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { TwitchSignIn } from '../../../../shared/protocol/index.js';
import { type SettingsView as Settings, SettingsInput } from '../../../../shared/settings.js';
import { ApiError, type ControlApi } from '../api.js';
import { fieldIssues } from '../field-issues.js';
import { Field } from '../fields.js';
import { describeError, Notice, PlatformMark } from '../ui.js';
import { usePolling } from '../use-polling.js';
import { busyAction, SIGN_IN_POLL_MS } from './busy-action.js';
import { type Note, TIME } from './channels.js';

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

/** Twitch: the sign-in that adds follows, subscriptions, cheers and raids, and the client id it uses. */
export function TwitchBox(props: { api: ControlApi; settings: Settings; saved: (s: Settings) => void }) {
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
