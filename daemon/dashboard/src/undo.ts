// Undo/redo for the canvas editor: a bounded past, the present, and a future cleared by any new edit.
export interface UndoStack<T> {
  past: T[];
  present: T;
  future: T[];
  /** Edits with the same key in a row (one drag, one typed field) make one undo step. */
  lastKey?: string;
}

const LIMIT = 200;

export const startUndoStack = <T>(present: T): UndoStack<T> => ({ past: [], present, future: [] });

export function commit<T>(stack: UndoStack<T>, next: T, key?: string): UndoStack<T> {
  if (next === stack.present) return stack;
  if (key !== undefined && key === stack.lastKey) {
    return { ...stack, present: next, future: [] };
  }
  return {
    past: [...stack.past, stack.present].slice(-LIMIT),
    present: next,
    future: [],
    ...(key !== undefined ? { lastKey: key } : {}),
  };
}

export function undo<T>(stack: UndoStack<T>): UndoStack<T> {
  const previous = stack.past.at(-1);
  if (previous === undefined) return stack;
  return { past: stack.past.slice(0, -1), present: previous, future: [stack.present, ...stack.future] };
}

export function redo<T>(stack: UndoStack<T>): UndoStack<T> {
  const [next, ...rest] = stack.future;
  if (next === undefined) return stack;
  return { past: [...stack.past, stack.present], present: next, future: rest };
}
