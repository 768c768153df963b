// The editor's keyboard: Ctrl+S saves, Ctrl+Z / Ctrl+Shift+Z (or Ctrl+Y) undo and redo, arrows nudge the
// selected widget (Shift: 10 px), Delete removes it when the canvas has focus.
import { useEffect, useRef } from 'preact/hooks';
import type { Overlay, Widget } from '../../../../shared/protocol/index.js';
import { redo, type UndoStack, undo } from '../undo.js';

function isTyping(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))
  );
}

const NUDGES: Record<string, [number, number]> = {
  ArrowLeft: [-1, 0],
  ArrowRight: [1, 0],
  ArrowUp: [0, -1],
  ArrowDown: [0, 1],
};

export function useEditorKeys(options: {
  selected: string | undefined;
  save: () => void;
  setUndoStack: (change: (h: UndoStack<Overlay>) => UndoStack<Overlay>) => void;
  editWidget: (id: string, change: (w: Widget) => Widget, key?: string) => void;
  removeWidget: (id: string) => void;
}): void {
  // The options of the latest render, read at each key: a key pressed right after a selection changed
  // (before effects run) still moves the widget now selected.
  const latest = useRef(options);
  latest.current = options;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const options = latest.current;
      const { selected, setUndoStack } = options;
      const mod = e.ctrlKey || e.metaKey;
      if (mod && e.key.toLowerCase() === 's') {
        e.preventDefault();
        options.save();
        return;
      }
      if (isTyping(e.target)) return; // the field's own undo and caret keys
      if (mod && e.key.toLowerCase() === 'z') {
        e.preventDefault();
        setUndoStack((h) => (e.shiftKey ? redo(h) : undo(h)));
        return;
      }
      if (mod && e.key.toLowerCase() === 'y') {
        e.preventDefault();
        setUndoStack(redo);
        return;
      }
      if (!selected) return;
      const nudge = NUDGES[e.key];
      if (nudge && !mod) {
        e.preventDefault();
        const step = e.shiftKey ? 10 : 1;
        // Held keys (auto-repeat) are one undo step; separate presses are separate steps.
        const key = e.repeat ? `nudge-${selected}` : undefined;
        options.editWidget(
          selected,
          (w) => ({ ...w, x: w.x + nudge[0] * step, y: w.y + nudge[1] * step }),
          key,
        );
        if (!e.repeat) setUndoStack((h) => ({ ...h, lastKey: `nudge-${selected}` }));
        return;
      }
      if (
        (e.key === 'Delete' || e.key === 'Backspace') &&
        e.target instanceof HTMLElement &&
        e.target.closest('.canvas')
      ) {
        e.preventDefault();
        options.removeWidget(selected);
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}
