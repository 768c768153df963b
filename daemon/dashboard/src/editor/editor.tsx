// The canvas editor of one overlay: add, place, resize and edit widgets, undo/redo, and save by PUT.
import { useCallback, useMemo, useState } from 'preact/hooks';
import {
  type Overlay,
  OverlayInput,
  parseWith,
  type Widget,
  type WidgetType,
} from '../../../../shared/protocol/index.js';
import { fieldIssues } from '../field-issues.js';
import { isImage } from '../media-kinds.js';
import type { Shared } from '../shared-data.js';
import { Notice } from '../ui.js';
import { commit, redo, startUndoStack, type UndoStack, undo } from '../undo.js';
import { defaultWidget, newWidgetId, newWidgetName, placeWidget } from '../widget-defaults.js';
import { Canvas } from './canvas.js';
import { ConflictNotice } from './conflict.js';
import { Layers } from './layers.js';
import { LivePreview } from './live-preview.js';
import { ObsUrl, TestGiftButton } from './overlay-checks.js';
import { SelectedWidget } from './selected-widget.js';
import { EditorToolbar } from './toolbar.js';
import { useEditorKeys } from './use-editor-keys.js';
import { overlayInput, type SaveState, useOverlaySaving } from './use-overlay-saving.js';

/** Edits of the overlay's widget list, each one undo step (or one per `key`). */
function useWidgetEdits(setUndoStack: (change: (h: UndoStack<Overlay>) => UndoStack<Overlay>) => void) {
  const edit = useCallback(
    (change: (o: Overlay) => Overlay, key?: string) => setUndoStack((h) => commit(h, change(h.present), key)),
    [setUndoStack],
  );
  const editWidget = useCallback(
    (id: string, change: (w: Widget) => Widget, key?: string) =>
      edit((o) => ({ ...o, widgets: o.widgets.map((w) => (w.id === id ? change(w) : w)) }), key),
    [edit],
  );
  const add = (widget: Widget) => edit((o) => ({ ...o, widgets: [...o.widgets, widget] }));
  const remove = (id: string) => edit((o) => ({ ...o, widgets: o.widgets.filter((w) => w.id !== id) }));
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
  return { editWidget, add, remove, restack };
}

export function Editor(props: { shared: Shared; overlay: Overlay; onClose: () => void }) {
  const { shared } = props;
  const [undoStack, setUndoStack] = useState<UndoStack<Overlay>>(() => startUndoStack(props.overlay));
  const [selected, setSelected] = useState<string | undefined>();
  const [autoSave, setAutoSave] = useState(true);
  const overlay = undoStack.present;
  const validation = useMemo(() => parseWith(OverlayInput, overlayInput(overlay)), [overlay]);
  const saving = useOverlaySaving({
    shared,
    opened: props.overlay,
    current: overlay,
    valid: validation.ok,
    autoSave,
    restart: (theirs) => setUndoStack(startUndoStack(theirs)),
    mapVersions: (change) =>
      setUndoStack((h) => {
        const present = change(h.present);
        const past = h.past.map(change);
        const future = h.future.map(change);
        const same =
          present === h.present &&
          past.every((v, i) => v === h.past[i]) &&
          future.every((v, i) => v === h.future[i]);
        return same ? h : { ...h, past, present, future };
      }),
  });
  const widgets = useWidgetEdits(setUndoStack);

  const addWidget = (type: WidgetType) => {
    const image = shared.media.find((m) => isImage(m.name))?.name;
    const id = newWidgetId(type, new Set(overlay.widgets.map((w) => w.id)));
    const created = defaultWidget(type, id, { x: 0, y: 0 }, image);
    if (!created) return;
    const drafted = { ...created, name: newWidgetName(type, overlay.widgets) };
    // Where it covers nothing already there, inside the canvas.
    const widget = { ...drafted, ...placeWidget(drafted, overlay) };
    widgets.add(widget);
    setSelected(id);
  };
  const removeWidget = (id: string) => {
    widgets.remove(id);
    setSelected(undefined);
  };

  useEditorKeys({
    selected,
    save: () => void saving.save(),
    setUndoStack,
    editWidget: widgets.editWidget,
    removeWidget,
  });

  const selectedIndex = overlay.widgets.findIndex((w) => w.id === selected);
  const selectedWidget = overlay.widgets[selectedIndex];
  const problem = validation.ok ? undefined : validation;
  // The schema's issue in plain words ("must be at least 1"), as every form of the dashboard says it.
  const problemWords = problem
    ? (fieldIssues(OverlayInput, overlayInput(overlay)).get(problem.field ?? '') ??
      problem.error.replace(/^[^:]+: /, ''))
    : undefined;
  const errorFor = (field: string) =>
    problem?.field === `widgets.${selectedIndex}.${field}` ? problemWords : undefined;

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
        <h1 id="editor-title" tabIndex={-1}>
          {overlay.name}
        </h1>
        <span class="muted">
          {overlay.width} × {overlay.height}
        </span>
        <span class={`save-state save-${saving.saveState}`} role="status" data-save-state={saving.saveState}>
          {stateText[saving.saveState]}
        </span>
      </div>

      <ObsUrl overlay={overlay} />
      <TestGiftButton shared={shared} overlay={overlay} />

      <EditorToolbar
        hasImages={shared.media.some((m) => isImage(m.name))}
        canUndo={undoStack.past.length > 0}
        canRedo={undoStack.future.length > 0}
        saved={saving.saveState === 'saved'}
        autoSave={autoSave}
        onAdd={addWidget}
        onUndo={() => setUndoStack(undo)}
        onRedo={() => setUndoStack(redo)}
        onSave={() => void saving.save()}
        onAutoSave={setAutoSave}
      />

      {problem && (
        <Notice kind="error">
          {problem.field ? <code>{problem.field}</code> : null} {problemWords}
        </Notice>
      )}
      {saving.conflict && (
        <ConflictNotice
          conflict={saving.conflict}
          mine={overlay}
          onKeepMine={saving.keepMine}
          onTakeTheirs={saving.takeTheirs}
        />
      )}
      {saving.saveError && <Notice kind="error">{saving.saveError}</Notice>}

      <div class="editor-body">
        <div class="editor-main">
          <Canvas
            overlay={overlay}
            selected={selected}
            onSelect={setSelected}
            onBox={(id, box, key) => widgets.editWidget(id, (w) => ({ ...w, ...box }), key)}
          />
          <p class="hint muted">
            Drag to move, corner handles to resize. Tab to a widget, arrows nudge it (Shift: 10 px), Delete
            removes it. Ctrl+Z undoes, Ctrl+Shift+Z redoes.
          </p>
          <Layers widgets={overlay.widgets} selected={selected} onSelect={setSelected} />
        </div>
        <aside class="editor-side" aria-label="Selected widget">
          <h3>Properties</h3>
          {selectedWidget ? (
            <SelectedWidget
              widget={selectedWidget}
              index={selectedIndex}
              count={overlay.widgets.length}
              media={shared.media}
              errorFor={errorFor}
              onChange={(next, key) => widgets.editWidget(selectedWidget.id, () => next, key)}
              onRestack={(delta) => widgets.restack(selectedWidget.id, delta)}
              onRemove={() => removeWidget(selectedWidget.id)}
              onReset={
                shared.api.allows('POST', `/api/overlays/${overlay.id}/commands`)
                  ? () => shared.api.resetWidget(overlay.id, selectedWidget.id)
                  : undefined
              }
            />
          ) : (
            <p class="muted">Select a widget on the canvas or in the list.</p>
          )}
          <LivePreview overlay={overlay} />
        </aside>
      </div>
    </section>
  );
}
