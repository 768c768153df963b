// Saving the open overlay: one PUT at a time quoting the ETag it last saw (If-Match), autosave after a short
// pause, and a check every few seconds for a version saved elsewhere, shown as a conflict to resolve.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { keepLiveValues } from '../../../../shared/live-values.js';
import { type Overlay, OverlayInput, parseWith } from '../../../../shared/protocol/index.js';
import { ApiError } from '../api.js';
import type { Shared } from '../shared-data.js';
import { describeError } from '../ui.js';
import type { Conflict } from './conflict.js';

export type SaveState = 'saved' | 'pending' | 'saving' | 'invalid' | 'failed';

const AUTOSAVE_DELAY_MS = 250;
/** How often the editor asks whether the open overlay changed elsewhere. */
const CHANGE_POLL_MS = 2000;

export const overlayInput = (o: Overlay) => ({
  name: o.name,
  width: o.width,
  height: o.height,
  widgets: o.widgets,
});

interface OverlaySaving {
  saveState: SaveState;
  /** Why the daemon refused the last save, until the next one succeeds. */
  saveError: string | undefined;
  conflict: Conflict | undefined;
  save: () => Promise<void>;
  /** Saves this page's version over the other one, now that the person chose. */
  keepMine: () => void;
  /** Takes the other version as the new starting point (its own undo stack). */
  takeTheirs: () => void;
}

export function useOverlaySaving(options: {
  shared: Shared;
  /** The version the editor opened with. */
  opened: Overlay;
  /** The version on screen now. */
  current: Overlay;
  valid: boolean;
  autoSave: boolean;
  /** Replaces what is on screen (and its undo stack) with another version. */
  restart: (overlay: Overlay) => void;
  /** Applies a change to every version the editor holds (on screen, undo and redo), as no undo step. */
  mapVersions: (change: (overlay: Overlay) => Overlay) => void;
}): OverlaySaving {
  const { shared, current, valid, autoSave } = options;
  const id = options.opened.id;
  const [saving, setSaving] = useState(false);
  /** The layout the daemon last refused, so the refusal shows until the next edit. */
  const [refused, setRefused] = useState<Overlay | undefined>();
  const [saveError, setSaveError] = useState<string | undefined>();
  const [conflict, setConflict] = useState<Conflict | undefined>();

  // Edits made while a PUT is on its way are sent right after it (the last state wins).
  const latest = useRef(current);
  latest.current = current;
  const lastSaved = useRef(options.opened);
  const inFlight = useRef(false);
  const autoSaveRef = useRef(autoSave);
  autoSaveRef.current = autoSave;
  /** The ETag of the version this page last loaded or saved: every save quotes it (If-Match). */
  const etag = useRef<string | undefined>();
  const conflictRef = useRef(conflict);
  conflictRef.current = conflict;

  const mapVersions = useRef(options.mapVersions);
  mapVersions.current = options.mapVersions;

  /**
   * The live values of the version in force (goal progress, counters, top gifters) into every version
   * this page holds: the canvas follows the stream, undo never brings an old value back, and a layout
   * already saved stays "saved" (the daemon keeps live values on a save anyway).
   */
  const followLive = useCallback((inForce: Overlay) => {
    mapVersions.current((version) => {
      const widgets = keepLiveValues(version.widgets, inForce.widgets);
      if (widgets === version.widgets) return version;
      const next = { ...version, widgets };
      if (version === lastSaved.current) lastSaved.current = next;
      return next;
    });
  }, []);

  /** The version saved now, as a conflict, unless it is the one this page knows. */
  const checkForChange = useCallback(async () => {
    const saved = await shared.api.getOverlay(id);
    if (inFlight.current) return;
    if (saved.etag === etag.current) return followLive(saved.value);
    setConflict({ theirs: saved.value, etag: saved.etag });
  }, [shared, id, followLive]);

  useEffect(() => {
    let stopped = false;
    void shared.api.getOverlay(id).then(
      (saved) => {
        if (!stopped && etag.current === undefined) etag.current = saved.etag;
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
    if (target === lastSaved.current || !parseWith(OverlayInput, overlayInput(target)).ok) return;
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

  useEffect(() => {
    if (!autoSave || conflict || current === lastSaved.current || !valid) return;
    const timer = setTimeout(() => void save(), AUTOSAVE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [current, valid, autoSave, save, conflict]);

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
    options.restart(conflict.theirs);
    shared.overlaySaved(conflict.theirs);
    setConflict(undefined);
  };

  // Derived during render, so it is never stale between an edit and the next effect.
  const saveState: SaveState = saving
    ? 'saving'
    : current === lastSaved.current
      ? 'saved'
      : !valid
        ? 'invalid'
        : refused === current
          ? 'failed'
          : 'pending';

  return { saveState, saveError, conflict, save, keepMine, takeTheirs };
}
