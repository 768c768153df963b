// The canvas editor of one overlay: add, place, resize and edit widgets, undo/redo, and save by PUT.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import {
  type Overlay,
  OverlayInput,
  parseWith,
  type Widget,
  type WidgetType,
} from '../../../../shared/protocol/index.js';
import { ApiError } from '../api.js';
import type { Shared } from '../app.js';
import { commit, type History, redo, startHistory, undo } from '../history.js';
import { isImage } from '../media-kinds.js';
import { describeError, Notice } from '../ui.js';
import { defaultWidget, newWidgetId, WIDGET_KINDS } from '../widget-defaults.js';
import { Canvas } from './canvas.js';
import { type Conflict, ConflictNotice } from './conflict.js';
import { Properties } from './properties.js';

type SaveState = 'saved' | 'pending' | 'saving' | 'invalid' | 'failed';
const AUTOSAVE_DELAY_MS = 250;
/** How often the editor asks whether the open overlay changed elsewhere. */
const CHANGE_POLL_MS = 2000;

const inputOf = (o: Overlay) => ({ name: o.name, width: o.width, height: o.height, widgets: o.widgets });

function isTyping(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))
  );
}

export function Editor(props: { shared: Shared; overlay: Overlay; onClose: () => void }) {
  const { shared } = props;
  const [history, setHistory] = useState<History<Overlay>>(() => startHistory(props.overlay));
  const [selected, setSelected] = useState<string | undefined>();
  const [saving, setSaving] = useState(false);
  /** The layout the daemon last refused, so the refusal shows until the next edit. */
  const [refused, setRefused] = useState<Overlay | undefined>();
  const [saveError, setSaveError] = useState<string | undefined>();
  const [autoSave, setAutoSave] = useState(true);
  const [preview, setPreview] = useState(true);
  const [previewNonce, setPreviewNonce] = useState(0);
  const overlay = history.present;

  const validation = useMemo(() => parseWith(OverlayInput, inputOf(overlay)), [overlay]);

  // Saving: one PUT at a time; edits made meanwhile are sent right after (the last state wins).
  const latest = useRef(overlay);
  latest.current = overlay;
  const lastSaved = useRef(props.overlay);
  const inFlight = useRef(false);
  const autoSaveRef = useRef(autoSave);
  autoSaveRef.current = autoSave;
  /** The ETag of the version this page last loaded or saved: every save quotes it (If-Match). */
  const etag = useRef<string | undefined>();
  const [conflict, setConflict] = useState<Conflict | undefined>();
  const conflictRef = useRef(conflict);
  conflictRef.current = conflict;
  const id = props.overlay.id;

  /** The version saved now, as a conflict, unless it is the one this page knows. */
  const checkForChange = useCallback(async () => {
    const current = await shared.api.getOverlay(id);
    if (current.etag === etag.current || inFlight.current) return;
    setConflict({ theirs: current.value, etag: current.etag });
  }, [shared, id]);

  useEffect(() => {
    let stopped = false;
    void shared.api.getOverlay(id).then(
      (current) => {
        if (!stopped && etag.current === undefined) etag.current = current.etag;
      },
      () => {},
    );
    const timer = setInterval(() => {
      if (!conflictRef.current && etag.current !== undefined) void checkForChange().catch(() => {});
    }, CHANGE_POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [shared, id, checkForChange]);

  const save = useCallback(async () => {
    if (inFlight.current || conflictRef.current) return;
    const target = latest.current;
    if (target === lastSaved.current || !parseWith(OverlayInput, inputOf(target)).ok) return;
    inFlight.current = true;
    setSaving(true);
    try {
      const saved = await shared.api.saveOverlay(target, etag.current);
      etag.current = saved.etag;
      lastSaved.current = target;
      shared.overlaySaved(saved.value);
      setSaveError(undefined);
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) {
        inFlight.current = false;
        await checkForChange().catch(() => {});
      } else {
        setSaveError(describeError(err));
        setRefused(target);
      }
    } finally {
      inFlight.current = false;
      setSaving(false);
    }
    // Edits made while this PUT was on its way go out now (the last state wins).
    if (
      autoSaveRef.current &&
      !conflictRef.current &&
      latest.current !== target &&
      latest.current !== lastSaved.current
    )
      void save();
  }, [shared, checkForChange]);

  const keepMine = () => {
    if (!conflict) return;
    etag.current = conflict.etag;
    setConflict(undefined);
    conflictRef.current = undefined;
    // Saved over the other version on purpose, now that the person chose.
    lastSaved.current = conflict.theirs;
    void save();
  };
  const takeTheirs = () => {
    if (!conflict) return;
    etag.current = conflict.etag;
    lastSaved.current = conflict.theirs;
    setHistory(startHistory(conflict.theirs));
    shared.overlaySaved(conflict.theirs);
    setConflict(undefined);
  };

  useEffect(() => {
    if (!autoSave || conflict || overlay === lastSaved.current || !validation.ok) return;
    const timer = setTimeout(() => void save(), AUTOSAVE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [overlay, validation.ok, autoSave, save, conflict]);

  // Derived during render, so it is never stale between an edit and the next effect.
  const saveState: SaveState = saving
    ? 'saving'
    : overlay === lastSaved.current
      ? 'saved'
      : !validation.ok
        ? 'invalid'
        : refused === overlay
          ? 'failed'
          : 'pending';

  const edit = useCallback(
    (change: (o: Overlay) => Overlay, key?: string) => setHistory((h) => commit(h, change(h.present), key)),
    [],
  );
  const editWidget = useCallback(
    (id: string, change: (w: Widget) => Widget, key?: string) =>
      edit((o) => ({ ...o, widgets: o.widgets.map((w) => (w.id === id ? change(w) : w)) }), key),
    [edit],
  );

  const addWidget = (type: WidgetType) => {
    const image = shared.media.find((m) => isImage(m.name))?.name;
    const taken = new Set(overlay.widgets.map((w) => w.id));
    const id = newWidgetId(type, taken);
    const offset = (overlay.widgets.length % 10) * 24;
    const at = { x: Math.round(overlay.width * 0.1) + offset, y: Math.round(overlay.height * 0.1) + offset };
    const widget = defaultWidget(type, id, at, image);
    if (!widget) return;
    edit((o) => ({ ...o, widgets: [...o.widgets, widget] }));
    setSelected(id);
  };
  const removeWidget = (id: string) => {
    edit((o) => ({ ...o, widgets: o.widgets.filter((w) => w.id !== id) }));
    setSelected(undefined);
  };
  const restack = (id: string, delta: number) =>
    edit((o) => {
      const from = o.widgets.findIndex((w) => w.id === id);
      const to = from + delta;
      if (from < 0 || to < 0 || to >= o.widgets.length) return o;
      const widgets = [...o.widgets];
      const [moved] = widgets.splice(from, 1);
      if (moved) widgets.splice(to, 0, moved);
      return { ...o, widgets };
    });

  // Keyboard: Ctrl+Z / Ctrl+Shift+Z (or Ctrl+Y), arrows nudge (Shift: 10 px), Delete removes.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      if (mod && e.key.toLowerCase() === 's') {
        e.preventDefault();
        void save();
        return;
      }
      if (isTyping(e.target)) return; // the field's own undo and caret keys
      if (mod && e.key.toLowerCase() === 'z') {
        e.preventDefault();
        setHistory((h) => (e.shiftKey ? redo(h) : undo(h)));
        return;
      }
      if (mod && e.key.toLowerCase() === 'y') {
        e.preventDefault();
        setHistory(redo);
        return;
      }
      if (!selected) return;
      const step = e.shiftKey ? 10 : 1;
      const moves: Record<string, [number, number]> = {
        ArrowLeft: [-step, 0],
        ArrowRight: [step, 0],
        ArrowUp: [0, -step],
        ArrowDown: [0, step],
      };
      const delta = moves[e.key];
      if (delta && !mod) {
        e.preventDefault();
        // Held keys (auto-repeat) are one undo step; separate presses are separate steps.
        const key = e.repeat ? `nudge-${selected}` : undefined;
        editWidget(selected, (w) => ({ ...w, x: w.x + delta[0], y: w.y + delta[1] }), key);
        if (!e.repeat) setHistory((h) => ({ ...h, lastKey: `nudge-${selected}` }));
        return;
      }
      if (
        (e.key === 'Delete' || e.key === 'Backspace') &&
        e.target instanceof HTMLElement &&
        e.target.closest('.canvas')
      ) {
        e.preventDefault();
        removeWidget(selected);
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  });

  const selectedIndex = overlay.widgets.findIndex((w) => w.id === selected);
  const selectedWidget = overlay.widgets[selectedIndex];
  const problem = validation.ok ? undefined : validation;
  const errorFor = (field: string) =>
    problem?.field === `widgets.${selectedIndex}.${field}`
      ? problem.error.replace(/^[^:]+: /, '')
      : undefined;
  const hasImages = shared.media.some((m) => isImage(m.name));

  const stateText: Record<SaveState, string> = {
    saved: 'All changes saved — OBS shows this layout',
    pending: autoSave ? 'Saving soon…' : 'Unsaved changes',
    saving: 'Saving…',
    invalid: 'Not saved: fix the field marked below',
    failed: 'Not saved: the daemon refused it',
  };

  return (
    <section class="editor" aria-labelledby="editor-title" data-overlay-id={overlay.id}>
      <div class="section-head">
        <button type="button" onClick={props.onClose}>
          ← All overlays
        </button>
        <h2 id="editor-title">{overlay.name}</h2>
        <span class="muted">
          {overlay.width} × {overlay.height}
        </span>
        <span class={`save-state save-${saveState}`} role="status" data-save-state={saveState}>
          {stateText[saveState]}
        </span>
      </div>

      <div class="toolbar" role="toolbar" aria-label="Editor">
        <span class="toolbar-label">Add:</span>
        {WIDGET_KINDS.map((k) => (
          <button
            type="button"
            key={k.type}
            onClick={() => addWidget(k.type)}
            disabled={k.type === 'image' && !hasImages}
            title={
              k.type === 'image' && !hasImages
                ? 'Upload an image under Media first'
                : `Add a ${k.label} widget`
            }
          >
            + {k.label}
          </button>
        ))}
        <span class="toolbar-sep" />
        <button
          type="button"
          onClick={() => setHistory(undo)}
          disabled={history.past.length === 0}
          title="Ctrl+Z"
        >
          Undo
        </button>
        <button
          type="button"
          onClick={() => setHistory(redo)}
          disabled={history.future.length === 0}
          title="Ctrl+Shift+Z"
        >
          Redo
        </button>
        <button
          type="button"
          class="primary"
          onClick={() => void save()}
          disabled={saveState === 'saved'}
          title="Ctrl+S"
        >
          Save
        </button>
        <label class="check">
          <input type="checkbox" checked={autoSave} onChange={(e) => setAutoSave(e.currentTarget.checked)} />
          Save every change
        </label>
      </div>

      {problem && (
        <Notice kind="error">
          {problem.field ? <code>{problem.field}</code> : null} {problem.error.replace(/^[^:]+: /, '')}
        </Notice>
      )}
      {conflict && (
        <ConflictNotice conflict={conflict} mine={overlay} onKeepMine={keepMine} onTakeTheirs={takeTheirs} />
      )}
      {saveError && <Notice kind="error">{saveError}</Notice>}

      <div class="editor-body">
        <div class="editor-main">
          <Canvas
            overlay={overlay}
            selected={selected}
            onSelect={setSelected}
            onBox={(id, box, key) => editWidget(id, (w) => ({ ...w, ...box }), key)}
          />
          <p class="hint muted">
            Drag to move, corner handles to resize. Tab to a widget, arrows nudge it (Shift: 10 px), Delete
            removes it. Ctrl+Z undoes, Ctrl+Shift+Z redoes.
          </p>
          <div class="layers">
            <h3>Widgets (back to front)</h3>
            {overlay.widgets.length === 0 && <p class="muted">No widgets yet: add one above.</p>}
            <ol>
              {overlay.widgets.map((w) => (
                <li key={w.id}>
                  <button type="button" aria-pressed={w.id === selected} onClick={() => setSelected(w.id)}>
                    {w.type} · {w.id}
                  </button>
                </li>
              ))}
            </ol>
          </div>
        </div>
        <aside class="editor-side" aria-label="Selected widget">
          <h3>Properties</h3>
          {selectedWidget ? (
            <>
              <Properties
                widget={selectedWidget}
                media={shared.media}
                errorFor={errorFor}
                onChange={(next, key) => editWidget(selectedWidget.id, () => next, key)}
              />
              <div class="row">
                <button
                  type="button"
                  onClick={() => restack(selectedWidget.id, -1)}
                  disabled={selectedIndex === 0}
                >
                  Send backward
                </button>
                <button
                  type="button"
                  onClick={() => restack(selectedWidget.id, 1)}
                  disabled={selectedIndex === overlay.widgets.length - 1}
                >
                  Bring forward
                </button>
                <button type="button" class="danger" onClick={() => removeWidget(selectedWidget.id)}>
                  Remove widget
                </button>
              </div>
            </>
          ) : (
            <p class="muted">Select a widget on the canvas or in the list.</p>
          )}
          <div class="preview">
            <div class="row">
              <label class="check">
                <input
                  type="checkbox"
                  checked={preview}
                  onChange={(e) => setPreview(e.currentTarget.checked)}
                />
                Live preview (what OBS shows)
              </label>
              {preview && (
                <button type="button" class="quiet" onClick={() => setPreviewNonce((n) => n + 1)}>
                  Reload
                </button>
              )}
            </div>
            {preview && <LivePreview overlay={overlay} nonce={previewNonce} />}
          </div>
        </aside>
      </div>
    </section>
  );
}

/** The real overlay page in an iframe: it receives overlay-update like OBS does. */
function LivePreview(props: { overlay: Overlay; nonce: number }) {
  const width = 288;
  const scale = width / props.overlay.width;
  return (
    <div class="live-preview" style={{ width: `${width}px`, height: `${props.overlay.height * scale}px` }}>
      <iframe
        key={props.nonce}
        title="Live preview of the overlay"
        src={`/overlay/${props.overlay.id}`}
        width={props.overlay.width}
        height={props.overlay.height}
        style={{ transform: `scale(${scale})` }}
        tabIndex={-1}
      />
    </div>
  );
}
