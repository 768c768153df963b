// The dashboard shell: sign-in gate, navigation (the views the signer may use), and the data every view
// shares (overlays, media, rules).
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Overlay } from '../../../shared/protocol/index.js';
import type { RuleList } from '../../../shared/rules.js';
import { ActionsView } from './actions-view.js';
import { type ApiError, ControlApi, type Credential, type MediaItem } from './api.js';
import { Editor } from './editor/editor.js';
import { HistoryView } from './history-view.js';
import { MediaView } from './media-view.js';
import { OverlaysView } from './overlays-view.js';
import { homeTab, TABS, type Tab, tabsFor } from './roles.js';
import { RulesView } from './rules/rules-view.js';
import { forgetKey } from './session.js';
import { SettingsView } from './settings-view.js';
import type { Shared } from './shared-data.js';
import { SourcesView } from './sources/sources-view.js';
import { StatusView } from './status-view.js';
import { TestPanel } from './test-panel.js';
import { describeError, focusSoon, Notice } from './ui.js';

/** The width below which the dashboard takes its phone layout (the same as in dashboard.css). */
const PHONE_QUERY = '(max-width: 640px)';

/** Whether the window is phone-sized now, following rotations and resizes. */
function usePhone(): boolean {
  const [phone, setPhone] = useState(() => window.matchMedia(PHONE_QUERY).matches);
  useEffect(() => {
    const query = window.matchMedia(PHONE_QUERY);
    const follow = () => setPhone(query.matches);
    query.addEventListener('change', follow);
    return () => query.removeEventListener('change', follow);
  }, []);
  return phone;
}

/** Where the dashboard is: a view, and the overlay open in the editor. */
interface Route {
  tab: Tab;
  editing: string | undefined;
}

/**
 * Each view has its own address (`#/rules`, `#/overlays/<id>` for the editor), so a reload stays on it and
 * Back returns to the view before. A fragment that names no view of `tabs` (or the sign-in `#key=…`) is
 * the home view: Overlays, or Status for a device that may not edit them.
 */
export function routeOf(hash: string, tabs: readonly { id: Tab }[] = TABS): Route {
  const [, tab, editing] = /^#\/([a-z]+)(?:\/([^/]+))?$/.exec(hash) ?? [];
  const known = tabs.find((t) => t.id === tab)?.id;
  if (!known) return { tab: homeTab(tabs), editing: undefined };
  return { tab: known, editing: known === 'overlays' && editing ? decodeURIComponent(editing) : undefined };
}

export const hashOf = (route: Route): string =>
  `#/${route.tab}${route.tab === 'overlays' && route.editing ? `/${encodeURIComponent(route.editing)}` : ''}`;

/** Follows the address's fragment among `tabs`; `go` adds a history entry, so Back works. */
function useRoute(tabs: readonly { id: Tab }[]): [Route, (next: Route) => void] {
  const [route, setRoute] = useState(() => routeOf(location.hash, tabs));
  useEffect(() => {
    const follow = () => setRoute(routeOf(location.hash, tabs));
    follow();
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, [tabs]);
  const go = useCallback((next: Route) => {
    if (location.hash !== hashOf(next)) location.hash = hashOf(next);
    else setRoute(next);
  }, []);
  return [route, go];
}

function SignInNeeded() {
  return (
    <main class="signin">
      <h1>overlay-daemon dashboard</h1>
      <Notice kind="info">
        Open the sign-in URL printed by <code>overlay-daemon</code> when it started (it looks like{' '}
        <code>http://127.0.0.1:7890/dashboard#key=…</code>). The dashboard needs that key to change your
        overlays; it only works on this computer.
      </Notice>
    </main>
  );
}

/** A paired device the streamer revoked: nothing more works from it until it is paired again. */
export function SignedOut() {
  return (
    <main class="signin">
      <h1>Signed out</h1>
      <Notice kind="error">
        This device was signed out (revoked) by the streamer. To use the dashboard from it again, ask the
        streamer for a new pairing code and <a href="/pair">pair again</a>.
      </Notice>
    </main>
  );
}

export function App(props: {
  /** The admin key, or a paired device's session. */
  credential: Credential;
  /** A paired device's call answered 401: it was revoked. */
  onSignedOut?: () => void;
}) {
  const api = useMemo(() => new ControlApi(props.credential), [props.credential]);
  const [refused, setRefused] = useState<ApiError | undefined>();
  const phone = usePhone();
  const tabs = useMemo(() => tabsFor(api.signer, phone), [api, phone]);
  const [{ tab, editing }, go] = useRoute(tabs);
  const main = useRef<HTMLElement>(null);
  const setEditing = (id: string | undefined) => go({ tab: 'overlays', editing: id });
  const firstRoute = useRef(true);
  const [overlays, setOverlays] = useState<Overlay[]>([]);
  const [media, setMedia] = useState<MediaItem[]>([]);
  const [rules, setRules] = useState<RuleList>([]);
  const [loadError, setLoadError] = useState<string | undefined>();
  const [loaded, setLoaded] = useState(false);

  api.onUnauthorized = api.device ? () => props.onSignedOut?.() : setRefused;

  // What a device's role may not read stays empty rather than asked for and refused.
  const reloadOverlays = useCallback(async () => {
    if (api.allows('GET', '/api/overlays')) setOverlays(await api.listOverlays());
  }, [api]);
  const reloadMedia = useCallback(async () => {
    if (api.allows('GET', '/api/media')) setMedia(await api.listMedia());
  }, [api]);
  const reloadRules = useCallback(async () => {
    if (api.allows('GET', '/api/rules')) setRules(await api.listRules());
  }, [api]);

  useEffect(() => {
    if (!props.credential) return;
    Promise.allSettled([reloadOverlays(), reloadMedia(), reloadRules()]).then((results) => {
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      setLoadError(failed ? describeError(failed.reason) : undefined);
      setLoaded(true);
    });
  }, [props.credential, reloadOverlays, reloadMedia, reloadRules]);

  const label = tabs.find((t) => t.id === tab)?.label ?? '';
  useEffect(() => {
    document.title = `${label} · overlay-daemon`;
  }, [label]);
  // On another view (a tab, a new overlay's editor, closing it, Back), the keyboard goes to the view's
  // heading, so a screen reader says where it is and the old view's button is not left focused in nothing.
  useEffect(() => {
    if (firstRoute.current) {
      firstRoute.current = false;
      return;
    }
    focusSoon(() => main.current?.querySelector<HTMLElement>('h1'));
  }, [tab, editing]);

  // A last resort for every action not handled where it happens: when the focused control leaves the
  // page (its card deleted, its form closed) and the keyboard would fall to the page's body, it goes to
  // the view's heading, where reading the view starts again.
  useEffect(() => {
    const lost = (e: FocusEvent) => {
      const gone = e.target;
      if (e.relatedTarget || !(gone instanceof HTMLElement)) return;
      requestAnimationFrame(() => {
        if (gone.isConnected || (document.activeElement && document.activeElement !== document.body)) return;
        main.current?.querySelector<HTMLElement>('h1')?.focus();
      });
    };
    document.addEventListener('focusout', lost);
    return () => document.removeEventListener('focusout', lost);
  }, []);

  if (!props.credential) return <SignInNeeded />;

  const shared: Shared = {
    api,
    overlays,
    media,
    rules,
    reloadOverlays,
    reloadMedia,
    reloadRules,
    overlaySaved: (saved) => setOverlays((list) => list.map((o) => (o.id === saved.id ? saved : o))),
  };
  const editingOverlay = editing ? overlays.find((o) => o.id === editing) : undefined;

  return (
    <div class="shell" data-loaded={loaded ? 'true' : 'false'}>
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link by convention (screen readers list it with the links); its fragment would replace the view's address, so it moves focus itself */}
      <a
        class="skip-link"
        href="#main"
        onClick={(e) => {
          // The fragment is the view's address: move the keyboard to the content without changing it.
          e.preventDefault();
          main.current?.focus();
        }}
      >
        Skip to main content
      </a>
      <header class="topbar">
        <span class="brand">overlay-daemon</span>
        {api.device && (
          <span class="signer" data-role={api.device.role}>
            {api.device.name} · {api.device.role}
          </span>
        )}
        <nav aria-label="Sections">
          {tabs.map((t) => (
            <button
              type="button"
              key={t.id}
              class="tab"
              aria-current={tab === t.id ? 'page' : undefined}
              onClick={() => go({ tab: t.id, editing: undefined })}
            >
              {t.label}
            </button>
          ))}
        </nav>
        {/* A device's cookie is the browser's alone to keep; the streamer revokes it from their computer. */}
        {!api.device && (
          <button
            type="button"
            class="quiet"
            onClick={() => {
              forgetKey();
              location.reload();
            }}
          >
            Sign out
          </button>
        )}
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {refused && (
          <Notice kind="error">
            This sign-in link is no longer valid. Open the sign-in link that <code>overlay-daemon</code>{' '}
            printed when it last started, or run <code>overlay-daemon dashboard</code> in a terminal to open
            the dashboard signed in.
          </Notice>
        )}
        {loadError && !refused && <Notice kind="error">Could not load everything: {loadError}</Notice>}
        {tab === 'overlays' && editingOverlay && (
          <Editor
            key={editingOverlay.id}
            shared={shared}
            overlay={editingOverlay}
            onClose={() => setEditing(undefined)}
          />
        )}
        {tab === 'overlays' && !editingOverlay && <OverlaysView shared={shared} onEdit={setEditing} />}
        {tab === 'rules' && <RulesView shared={shared} />}
        {tab === 'media' && <MediaView shared={shared} />}
        {tab === 'test' && <TestPanel shared={shared} />}
        {tab === 'sources' && <SourcesView shared={shared} />}
        {tab === 'actions' && <ActionsView shared={shared} />}
        {tab === 'history' && <HistoryView shared={shared} />}
        {tab === 'settings' && <SettingsView shared={shared} />}
        {tab === 'status' && <StatusView shared={shared} />}
      </main>
    </div>
  );
}
