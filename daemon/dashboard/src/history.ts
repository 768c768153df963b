// Undo/redo for the canvas editor: a bounded past, the present, and a future cleared by any new edit.
export interface History<T> {
  past: T[];
  present: T;
  future: T[];
  /** Edits with the same key in a row (one drag, one typed field) make one undo step. */
  lastKey?: string;
}

const LIMIT = 200;

export const startHistory = <T>(present: T): History<T> => ({ past: [], present, future: [] });

export function commit<T>(history: History<T>, next: T, key?: string): History<T> {
  if (next === history.present) return history;
  if (key !== undefined && key === history.lastKey) {
    return { ...history, present: next, future: [] };
  }
  return {
    past: [...history.past, history.present].slice(-LIMIT),
    present: next,
    future: [],
    ...(key !== undefined ? { lastKey: key } : {}),
  };
}

export function undo<T>(history: History<T>): History<T> {
  const previous = history.past.at(-1);
  if (previous === undefined) return history;
  return { past: history.past.slice(0, -1), present: previous, future: [history.present, ...history.future] };
}

export function redo<T>(history: History<T>): History<T> {
  const [next, ...rest] = history.future;
  if (next === undefined) return history;
  return { past: [...history.past, history.present], present: next, future: rest };
}
