// Kick in the Sources view: its follows, subscriptions, gifts and chat come as webhooks to the Gatekeeper,
// which keeps them for the daemon once the streamer links Kick there.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { KickLinkState } from '../../../../shared/protocol/index.js';
import type { ControlApi } from '../api.js';
import { describeError, Notice, PlatformMark } from '../ui.js';
import { usePolling } from '../use-polling.js';
import { busyAction, SIGN_IN_POLL_MS } from './busy-action.js';

/** How often the Kick box asks about the events socket while it is not open. */
const KICK_EVENTS_POLL_MS = 3000;

/**
 * Kick: its follows, subscriptions, gifts and chat come as webhooks to the Gatekeeper, which keeps them
 * for the daemon once the streamer links Kick there (the same link as `overlay-daemon connect kick`).
 */
export function KickBox(props: { api: ControlApi }) {
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
