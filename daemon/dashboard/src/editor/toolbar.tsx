// The editor's toolbar: add a widget of each kind, undo, redo, save, and whether every change is saved.
import type { WidgetType } from '../../../../shared/protocol/index.js';
import { WIDGET_KINDS } from '../widget-defaults.js';

export function EditorToolbar(props: {
  hasImages: boolean;
  canUndo: boolean;
  canRedo: boolean;
  saved: boolean;
  autoSave: boolean;
  onAdd: (type: WidgetType) => void;
  onUndo: () => void;
  onRedo: () => void;
  onSave: () => void;
  onAutoSave: (on: boolean) => void;
}) {
  return (
    <div class="toolbar" role="toolbar" aria-label="Editor">
      <span class="toolbar-label">Add:</span>
      {WIDGET_KINDS.map((k) => {
        const needsImage = k.type === 'image' && !props.hasImages;
        return (
          <button
            type="button"
            key={k.type}
            onClick={() => props.onAdd(k.type)}
            disabled={needsImage}
            title={needsImage ? 'Upload an image under Media first' : `Add a ${k.label} widget`}
          >
            + {k.label}
          </button>
        );
      })}
      <span class="toolbar-sep" />
      <button type="button" onClick={props.onUndo} disabled={!props.canUndo} title="Ctrl+Z">
        Undo
      </button>
      <button type="button" onClick={props.onRedo} disabled={!props.canRedo} title="Ctrl+Shift+Z">
        Redo
      </button>
      <button type="button" class="primary" onClick={props.onSave} disabled={props.saved} title="Ctrl+S">
        Save
      </button>
      <label class="check">
        <input
          type="checkbox"
          checked={props.autoSave}
          onChange={(e) => props.onAutoSave(e.currentTarget.checked)}
        />
        Save every change
      </label>
    </div>
  );
}
