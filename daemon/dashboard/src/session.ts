// The admin key: taken once from the sign-in URL's fragment, kept in sessionStorage, never in the address bar.
const STORAGE_KEY = 'overlay-daemon.admin-key';

/**
 * Reads `#key=<admin key>` from the sign-in URL printed by overlay-daemon. The key travels in the
 * fragment so it never reaches a server log or a Referer; once read it is removed from the address
 * bar (and from history) so a screenshot or a shared screen does not show it.
 */
export function takeKeyFromLocation(
  loc: Location = location,
  storage: Storage = sessionStorage,
): string | undefined {
  const params = new URLSearchParams(loc.hash.replace(/^#/, ''));
  const fromHash = params.get('key')?.trim();
  if (fromHash) {
    storage.setItem(STORAGE_KEY, fromHash);
    history.replaceState(history.state, '', `${loc.pathname}${loc.search}`);
  }
  return storage.getItem(STORAGE_KEY) ?? undefined;
}

export function forgetKey(storage: Storage = sessionStorage): void {
  storage.removeItem(STORAGE_KEY);
}
