// Views that show the daemon's live state (status, actions) ask for it again every few seconds while shown.
import { useEffect } from 'preact/hooks';

/** Runs `load` now and every `everyMs` while the view is shown (`load` should be stable: useCallback). */
export function usePolling(load: () => Promise<void>, everyMs: number): void {
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), everyMs);
    return () => clearInterval(timer);
  }, [load, everyMs]);
}
