import { describe, expect, it } from 'vitest';
import { commit, redo, startUndoStack, undo } from './undo.js';

describe('the editor undo stack', () => {
  it('undoes and redoes edits in order, and a new edit drops what could be redone', () => {
    let s = startUndoStack('a');
    s = commit(s, 'b');
    s = commit(s, 'c');
    expect(s.present).toBe('c');
    s = undo(s);
    expect(s.present).toBe('b');
    s = undo(s);
    expect(s.present).toBe('a');
    s = redo(s);
    expect(s.present).toBe('b');
    s = commit(s, 'd');
    expect(s.future).toEqual([]);
    expect(redo(s)).toBe(s);
    expect(undo(s).present).toBe('b');
  });

  it('has nothing to undo at the start and nothing to redo at the end', () => {
    const s = startUndoStack(1);
    expect(undo(s)).toBe(s);
    expect(redo(s)).toBe(s);
  });

  it('makes one step of edits with the same key in a row (one drag), and separate steps otherwise', () => {
    let s = startUndoStack(0);
    for (let x = 1; x <= 5; x++) s = commit(s, x, 'drag-w1');
    expect(s.present).toBe(5);
    expect(s.past).toEqual([0]);
    s = commit(s, 6, 'drag-w2');
    s = commit(s, 7);
    s = commit(s, 8);
    expect(s.past).toEqual([0, 5, 6, 7]);
    expect(undo(s).present).toBe(7);
    // The first drag is one undo step from where it started.
    expect(undo(undo(undo(undo(s)))).present).toBe(0);
  });

  it('treats an edit that changes nothing as no step', () => {
    const value = { x: 1 };
    const s = commit(startUndoStack({ x: 0 }), value);
    expect(commit(s, value)).toBe(s);
  });

  it('keeps at most 200 steps to undo, dropping the oldest', () => {
    let s = startUndoStack(0);
    for (let n = 1; n <= 250; n++) s = commit(s, n);
    expect(s.past).toHaveLength(200);
    expect(s.past[0]).toBe(50);
    for (let n = 0; n < 300; n++) s = undo(s);
    expect(s.present).toBe(50);
  });
});
