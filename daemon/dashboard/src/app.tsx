// The dashboard shell: sign-in gate, navigation, and the data every view shares (overlays, media, rules).
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import type { Overlay } from '../../../shared/protocol/index.js';
import type { RuleList } from '../../../shared/rules.js';
import { ActionsView } from './actions-view.js';
import { type ApiError, ControlApi, type MediaItem } from './api.js';
import { Editor } from './editor/editor.js';
import { HistoryView } from './history-view.js';
import { MediaView } from './media-view.js';
import { OverlaysView } from './overlays-view.js';
import { RulesView } from './rules/rules-view.js';
import { forgetKey } from './session.js';
import { SettingsView } from './settings-view.js';
import type { Shared } from './shared-data.js';
import { SourcesView } from './sources-view.js';
import { StatusView } from './status-view.js';
import { TestPanel } from './test-panel.js';
import { describeError, Notice } from './ui.js';

type Tab =
  | 'overlays'
  | 'rules'
  | 'media'
  | 'test'
  | 'sources'
  | 'actions'
  | 'history'
  | 'settings'
  | 'status';
const TABS: readonly { id: Tab; label: string }[] = [
  { id: 'overlays', label: 'Overlays' },
  { id: 'rules', label: 'Rules' },
  { id: 'media', label: 'Media' },
  { id: 'test', label: 'Test events' },
  { id: 'sources', label: 'Sources' },
  { id: 'actions', label: 'Actions' },
  { id: 'history', label: 'History' },
  { id: 'settings', label: 'Settings' },
  { id: 'status', label: 'Status' },
];

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

export function App(props: { adminKey: string | undefined }) {
  const api = useMemo(() => new ControlApi(props.adminKey), [props.adminKey]);
  const [refused, setRefused] = useState<ApiError | undefined>();
  const [tab, setTab] = useState<Tab>('overlays');
  const [editing, setEditing] = useState<string | undefined>();
  const [overlays, setOverlays] = useState<Overlay[]>([]);
  const [media, setMedia] = useState<MediaItem[]>([]);
  const [rules, setRules] = useState<RuleList>([]);
  const [loadError, setLoadError] = useState<string | undefined>();
  const [loaded, setLoaded] = useState(false);

  api.onUnauthorized = setRefused;

  const reloadOverlays = useCallback(async () => setOverlays(await api.listOverlays()), [api]);
  const reloadMedia = useCallback(async () => setMedia(await api.listMedia()), [api]);
  const reloadRules = useCallback(async () => setRules(await api.listRules()), [api]);

  useEffect(() => {
    if (!props.adminKey) return;
    Promise.allSettled([reloadOverlays(), reloadMedia(), reloadRules()]).then((results) => {
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      setLoadError(failed ? describeError(failed.reason) : undefined);
      setLoaded(true);
    });
  }, [props.adminKey, reloadOverlays, reloadMedia, reloadRules]);

  if (!props.adminKey) return <SignInNeeded />;

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
      <header class="topbar">
        <span class="brand">overlay-daemon</span>
        <nav aria-label="Sections">
          {TABS.map((t) => (
            <button
              type="button"
              key={t.id}
              class="tab"
              aria-current={tab === t.id ? 'page' : undefined}
              onClick={() => {
                setTab(t.id);
                setEditing(undefined);
              }}
            >
              {t.label}
            </button>
          ))}
        </nav>
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
      </header>
      <main>
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
