// Overlay list: create, rename, resize, delete, the URLs to paste into OBS, and public overlays' viewer links.
import { useCallback, useEffect, useState } from 'preact/hooks';
import {
  type ConnectorStatus,
  type DaemonStatus,
  type Overlay,
  OverlayInput,
  parseWith,
} from '../../../shared/protocol/index.js';
import type { RelayStatus } from '../../../shared/protocol/relay.js';
import { fieldIssues } from './field-issues.js';
import { numberFromText } from './fields.js';
import { qrPath, relayStateWords, viewerCountWords } from './public-overlay.js';
import type { Shared } from './shared-data.js';
import {
  ConfirmButton,
  CopyButton,
  describeError,
  ErrorNotice,
  FieldError,
  focusSoon,
  Notice,
} from './ui.js';
import { usePolling } from './use-polling.js';

const SIZES = [
  { label: '1920 × 1080 (landscape)', width: 1920, height: 1080 },
  { label: '1080 × 1920 (portrait, TikTok)', width: 1080, height: 1920 },
  { label: '1280 × 720', width: 1280, height: 720 },
];

interface MetaDraft {
  name: string;
  width: string;
  height: string;
}

/** Name and canvas size, validated with the same schema the daemon uses. */
const candidateOf = (draft: MetaDraft) => ({
  name: draft.name.trim(),
  width: numberFromText(draft.width),
  height: numberFromText(draft.height),
});

function MetaForm(props: {
  idPrefix: string;
  initial: MetaDraft;
  submitLabel: string;
  onSubmit: (meta: { name: string; width: number; height: number }) => Promise<void>;
  onCancel?: () => void;
}) {
  const [draft, setDraft] = useState(props.initial);
  const [error, setError] = useState<{ field?: string; message: string } | undefined>();
  /** Fields left or changed by the person, and whether Create/Save was pressed: only then messages show. */
  const [touched, setTouched] = useState<ReadonlySet<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  /** What the daemon answered to the submit, shown below the form. */
  const [refusal, setRefusal] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setSubmitted(true);
    const candidate = candidateOf(draft);
    const parsed = parseWith(OverlayInput, candidate);
    if (!parsed.ok) {
      const [field, words] = [...fieldIssues(OverlayInput, candidate)][0] ?? ['', parsed.error];
      // The first field with a problem takes focus; its message is beside it.
      if (field) focusSoon(() => document.getElementById(`${props.idPrefix}-${field}`));
      return setError(field ? { field, message: words } : { message: words });
    }
    setBusy(true);
    setRefusal(undefined);
    try {
      await props.onSubmit(candidate);
      setError(undefined);
    } catch (err) {
      setError(undefined);
      setRefusal(err);
    } finally {
      setBusy(false);
    }
  };
  const p = props.idPrefix;
  // Messages follow the values: one goes as soon as its field is valid again.
  const issues = fieldIssues(OverlayInput, candidateOf(draft));
  const errorFor = (field: string) => (submitted || touched.has(field) ? issues.get(field) : undefined);
  const touch = (e: Event) => {
    const field = e.target instanceof HTMLElement ? e.target.id.slice(p.length + 1) : '';
    if (['name', 'width', 'height'].includes(field) && !touched.has(field))
      setTouched((set) => new Set(set).add(field));
  };
  return (
    <>
      <form class="meta-form" onSubmit={submit} onFocusOut={touch} noValidate>
        <label>
          Name
          <input
            id={`${p}-name`}
            value={draft.name}
            maxLength={100}
            required
            aria-invalid={errorFor('name') ? 'true' : undefined}
            aria-describedby={`${p}-name-error`}
            onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })}
          />
          <FieldError id={`${p}-name-error`} message={errorFor('name')} />
        </label>
        <label>
          Width
          <input
            id={`${p}-width`}
            type="number"
            min={1}
            max={7680}
            value={draft.width}
            aria-invalid={errorFor('width') ? 'true' : undefined}
            aria-describedby={`${p}-width-error`}
            onInput={(e) => setDraft({ ...draft, width: e.currentTarget.value })}
          />
          <FieldError id={`${p}-width-error`} message={errorFor('width')} />
        </label>
        <label>
          Height
          <input
            id={`${p}-height`}
            type="number"
            min={1}
            max={4320}
            value={draft.height}
            aria-invalid={errorFor('height') ? 'true' : undefined}
            aria-describedby={`${p}-height-error`}
            onInput={(e) => setDraft({ ...draft, height: e.currentTarget.value })}
          />
          <FieldError id={`${p}-height-error`} message={errorFor('height')} />
        </label>
        <label>
          Preset
          <select
            value=""
            onChange={(e) => {
              const size = SIZES[Number(e.currentTarget.value)];
              if (size) setDraft({ ...draft, width: String(size.width), height: String(size.height) });
            }}
          >
            <option value="">Choose a size…</option>
            {SIZES.map((s, i) => (
              <option key={s.label} value={String(i)}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <div class="row">
          <button type="submit" class="primary" disabled={busy}>
            {props.submitLabel}
          </button>
          {props.onCancel && (
            <button type="button" class="secondary" onClick={props.onCancel}>
              Cancel
            </button>
          )}
        </div>
        {error && !error.field && <Notice kind="error">{error.message}</Notice>}
      </form>
      {refusal !== undefined && <ErrorNotice error={refusal} />}
    </>
  );
}

/** Whether two addresses name one origin (`https://a.example` and `https://a.example/`, any case). */
function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

/**
 * The delete question, warning when OBS (or a tab) shows the overlay now, or viewers watch it through
 * its public link (the relay's count): they all see nothing from then on.
 */
function deleteQuestion(
  name: string,
  openPages: number | undefined,
  relayViewers: number | undefined,
): string {
  const question = `Delete “${name}” for good?`;
  const who: string[] = [];
  if (openPages)
    who.push(
      `${openPages === 1 ? '1 page has it open' : `${openPages} pages have it open`} now (an OBS source or a browser tab)`,
    );
  if (relayViewers)
    who.push(
      `${relayViewers === 1 ? '1 viewer watches' : `${relayViewers.toLocaleString('en-US')} viewers watch`} it through its public link`,
    );
  if (who.length === 0) return question;
  return `${question} ${who.join(' and ')}: it will show nothing there from then on.`;
}

/** How often the view asks the daemon for its relays' states and viewer counts (the relay counts every 5 s). */
const RELAY_POLL_MS = 5000;

/** A QR code of `text`, drawn as one SVG path (crisp at any size, nothing fetched). */
function QrCode(props: { text: string; label: string }) {
  const { size, d } = qrPath(props.text);
  return (
    <svg
      class="qr"
      viewBox={`0 0 ${size} ${size}`}
      role="img"
      aria-label={props.label}
      shape-rendering="crispEdges"
      data-qr
    >
      <rect width={size} height={size} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}

/**
 * The Public switch and, while the overlay is public, what its relay reports: state, viewer URL (copy,
 * QR code) and how many watch now. Turning it on while Free shows the daemon's Premium prompt.
 */
function PublicPanel(props: {
  shared: Shared;
  overlay: Overlay;
  entry: RelayStatus | undefined;
  onChanged: () => void;
}) {
  const { shared, overlay, entry } = props;
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<unknown>();
  const id = `public-${overlay.id}`;
  const toggle = async (on: boolean) => {
    setBusy(true);
    setRefusal(undefined);
    try {
      // `public` goes onto the version saved now, quoting its tag: nothing else is overwritten.
      const current = await shared.api.getOverlay(overlay.id);
      const saved = await shared.api.saveOverlay({ ...current.value, public: on }, current.etag);
      shared.overlaySaved(saved.value);
      props.onChanged();
    } catch (err) {
      setRefusal(err);
    } finally {
      setBusy(false);
    }
  };
  const takeBackPath = `/api/relay/${encodeURIComponent(overlay.id)}/take-back`;
  const takenOver = entry?.takenOverAt !== undefined && shared.api.allows('POST', takeBackPath);
  const takeBack = async () => {
    setBusy(true);
    setRefusal(undefined);
    try {
      await shared.api.takeBackRelay(overlay.id);
      props.onChanged();
    } catch (err) {
      setRefusal(err);
    } finally {
      setBusy(false);
    }
  };
  const viewerUrl = entry?.viewerUrl;
  return (
    <div class="public-panel" data-public>
      <label class="switch" for={id}>
        <input
          id={id}
          type="checkbox"
          role="switch"
          checked={overlay.public}
          aria-checked={overlay.public}
          disabled={busy}
          aria-describedby={`${id}-hint`}
          onChange={(e) => void toggle(e.currentTarget.checked)}
        />
        Public
      </label>
      <span class="muted" id={`${id}-hint`}>
        {overlay.public
          ? 'Anyone with the viewer link can watch this overlay live, without a tunnel.'
          : 'Share a viewer link that anyone can watch, served by the relay rather than your computer (Premium).'}
      </span>
      {refusal !== undefined && <ErrorNotice error={refusal} />}
      {overlay.public && (
        <div class="relay-info">
          <p class="relay-state" data-relay-state={entry?.state ?? 'starting'} role="status">
            {relayStateWords(entry)}
            {entry && (
              <>
                {' · '}
                <span data-viewers={entry.viewers}>{viewerCountWords(entry.viewers)}</span>
              </>
            )}
          </p>
          {takenOver && (
            <button type="button" onClick={() => void takeBack()} disabled={busy} data-take-back>
              Publish from here again
            </button>
          )}
          {viewerUrl ? (
            <div class="relay-link">
              <div class="url-row">
                <label>
                  Viewer URL
                  <input
                    readOnly
                    value={viewerUrl}
                    onFocus={(e) => e.currentTarget.select()}
                    data-viewer-url
                  />
                </label>
                <CopyButton text={viewerUrl} label="Copy viewer URL" />
              </div>
              <QrCode text={viewerUrl} label={`QR code of the viewer URL ${viewerUrl}`} />
            </div>
          ) : (
            <p class="muted">The viewer URL shows here once the relay has answered.</p>
          )}
        </div>
      )}
    </div>
  );
}

/** The card's "Rename / resize" button, where the keyboard goes back when its form closes. */
const renameButton = (id: string) =>
  document.querySelector<HTMLElement>(`li[data-overlay-id="${CSS.escape(id)}"] [data-rename]`);

function OverlayCard(props: {
  shared: Shared;
  overlay: Overlay;
  tunnel: string | undefined;
  connector: ConnectorStatus['connector'] | undefined;
  relay: RelayStatus | undefined;
  onRelayChanged: () => void;
  onEdit: () => void;
}) {
  const { shared, overlay } = props;
  const [settings, setSettings] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const localUrl = `${location.origin}/overlay/${overlay.id}`;
  // Opened through the tunnel (a paired phone), this page's address is the tunnel's: one URL, said once.
  const throughTunnel = props.tunnel !== undefined && sameOrigin(props.tunnel, location.origin);
  const tunnelUrl = props.tunnel && !throughTunnel ? `${props.tunnel}/overlay/${overlay.id}` : undefined;
  /** Overlay pages connected now (OBS sources, browser tabs), looked up when Delete is pressed. */
  const [openPages, setOpenPages] = useState<number | undefined>();
  /** Viewers of its public link now, as the relay counts them, looked up at the same moment. */
  const [relayViewers, setRelayViewers] = useState<number | undefined>();
  const countOpenPages = () => {
    setOpenPages(undefined);
    setRelayViewers(props.relay?.viewers);
    shared.api.clients().then(
      (counts) => setOpenPages(counts.clients[overlay.id] ?? 0),
      () => setOpenPages(undefined),
    );
    if (overlay.public)
      shared.api.relay().then(
        (entries) => setRelayViewers(entries.find((e) => e.overlayId === overlay.id)?.viewers),
        () => {},
      );
  };
  const remove = async () => {
    try {
      await shared.api.deleteOverlay(overlay.id);
      await shared.reloadOverlays();
      // The card and its buttons are gone: the keyboard goes to the list's heading.
      focusSoon(() => document.getElementById('overlays-title'));
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <li class="card overlay-card" data-overlay-id={overlay.id}>
      <div class="card-head">
        <h3>{overlay.name}</h3>
        <span class="muted">
          {overlay.width} × {overlay.height} · {overlay.widgets.length} widget
          {overlay.widgets.length === 1 ? '' : 's'}
        </span>
      </div>
      <div class="url-row">
        <label>
          {throughTunnel
            ? 'OBS Browser Source URL (the tunnel’s: reachable from anywhere)'
            : 'OBS Browser Source URL'}
          <input readOnly value={localUrl} onFocus={(e) => e.currentTarget.select()} />
        </label>
        <CopyButton text={localUrl} label="Copy OBS URL" />
      </div>
      {tunnelUrl && (
        <div class="url-row">
          <label>
            Tunnel URL (reachable from anywhere{props.connector ? `; connector ${props.connector}` : ''})
            <input readOnly value={tunnelUrl} onFocus={(e) => e.currentTarget.select()} />
          </label>
          <CopyButton text={tunnelUrl} label="Copy tunnel URL" />
        </div>
      )}
      <PublicPanel shared={shared} overlay={overlay} entry={props.relay} onChanged={props.onRelayChanged} />
      {settings ? (
        <MetaForm
          idPrefix={`meta-${overlay.id}`}
          initial={{ name: overlay.name, width: String(overlay.width), height: String(overlay.height) }}
          submitLabel="Save name and size"
          onCancel={() => {
            setSettings(false);
            focusSoon(() => renameButton(overlay.id));
          }}
          onSubmit={async (meta) => {
            // Name and size go onto the version saved now, quoting its tag: nothing else is overwritten.
            const current = await shared.api.getOverlay(overlay.id);
            const saved = await shared.api.saveOverlay({ ...current.value, ...meta }, current.etag);
            shared.overlaySaved(saved.value);
            setSettings(false);
            focusSoon(() => renameButton(overlay.id));
          }}
        />
      ) : (
        <div class="row">
          <button type="button" class="primary" onClick={props.onEdit}>
            Edit widgets
          </button>
          <button
            type="button"
            data-rename
            onClick={() => {
              setSettings(true);
              focusSoon(() => document.getElementById(`meta-${overlay.id}-name`));
            }}
          >
            Rename / resize
          </button>
          <ConfirmButton
            label="Delete"
            question={deleteQuestion(overlay.name, openPages, overlay.public ? relayViewers : undefined)}
            onAsk={countOpenPages}
            onConfirm={remove}
          />
        </div>
      )}
      {error && <Notice kind="error">{error}</Notice>}
    </li>
  );
}

export function OverlaysView(props: { shared: Shared; onEdit: (id: string) => void }) {
  const { shared } = props;
  const [creating, setCreating] = useState(false);
  const [status, setStatus] = useState<DaemonStatus | undefined>();
  useEffect(() => {
    shared.api.status().then(setStatus, () => setStatus(undefined));
  }, [shared.api]);
  const tunnel = status?.tunnel?.public_url ?? undefined;
  /** The relay of each public overlay, asked for again every few seconds (states, viewer counts). */
  const [relay, setRelay] = useState<RelayStatus[]>([]);
  const anyPublic = shared.overlays.some((o) => o.public);
  const loadRelay = useCallback(async () => {
    // Nothing public, nothing to ask about.
    if (!anyPublic) return setRelay([]);
    try {
      setRelay(await shared.api.relay());
    } catch {
      // The daemon is away: the last answer stays until it is back.
    }
  }, [shared.api, anyPublic]);
  usePolling(loadRelay, RELAY_POLL_MS);
  return (
    <section aria-labelledby="overlays-title">
      <div class="section-head">
        <h1 id="overlays-title" tabIndex={-1}>
          Overlays
        </h1>
        {!creating && (
          <button
            type="button"
            class="primary"
            data-new-overlay
            onClick={() => {
              setCreating(true);
              focusSoon(() => document.getElementById('new-overlay-name'));
            }}
          >
            New overlay
          </button>
        )}
      </div>
      {creating && (
        <div class="card">
          <h3>New overlay</h3>
          <MetaForm
            idPrefix="new-overlay"
            initial={{ name: 'My overlay', width: '1920', height: '1080' }}
            submitLabel="Create overlay"
            onCancel={() => {
              setCreating(false);
              focusSoon(() => document.querySelector<HTMLElement>('[data-new-overlay]'));
            }}
            onSubmit={async (meta) => {
              const created = await shared.api.createOverlay({ ...meta, widgets: [], public: false });
              await shared.reloadOverlays();
              setCreating(false);
              props.onEdit(created.id);
            }}
          />
        </div>
      )}
      {shared.overlays.length === 0 && !creating && <Notice kind="info">No overlays yet: create one.</Notice>}
      <ul class="cards">
        {shared.overlays.map((o) => (
          <OverlayCard
            key={o.id}
            shared={shared}
            overlay={o}
            tunnel={tunnel}
            connector={status?.tunnel?.connector}
            relay={relay.find((r) => r.overlayId === o.id)}
            onRelayChanged={() => void loadRelay()}
            onEdit={() => props.onEdit(o.id)}
          />
        ))}
      </ul>
    </section>
  );
}
