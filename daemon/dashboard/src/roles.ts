// What the dashboard shows to whom: the admin key sees every view; a paired device only what its role may do
// (decisions-3 §11), so a phone never offers a button the daemon would refuse.
import type { DeviceRole } from '../../../shared/protocol/devices.js';

/** Who signed in: the admin key on this computer, or a paired device with its role. */
export type Signer = 'admin' | DeviceRole;

export type Tab =
  | 'overlays'
  | 'rules'
  | 'media'
  | 'test'
  | 'sources'
  | 'actions'
  | 'history'
  | 'settings'
  | 'status';

export const TABS: readonly { id: Tab; label: string }[] = [
  { id: 'overlays', label: 'Overlays' },
  { id: 'rules', label: 'Rules' },
  { id: 'media', label: 'Media' },
  { id: 'test', label: 'Test events' },
  { id: 'sources', label: 'Sources' },
  { id: 'actions', label: 'Actions' },
  { id: 'history', label: 'History' },
  { id: 'settings', label: 'Settings' },
  { id: 'status', label: 'Status' },
];

/** On a phone the views a phone is for come first: Status, Actions (skip, clear), Test events, History. */
const PHONE_FIRST: readonly Tab[] = ['status', 'actions', 'test', 'history'];

/**
 * What a moderator may do, and nothing else: read status, history, leaderboards and the action log, send
 * test events, test a rule, skip or clear queues, and read the overlay and rule lists those views show
 * (the daemon's table is daemon/src/http/device-access.ts).
 */
const MODERATOR_ALLOWS: readonly { method: string; path: RegExp }[] = [
  { method: 'GET', path: /^\/api\/(status|session|clients|leaderboard|events|sessions|overlays|rules)$/ },
  { method: 'GET', path: /^\/api\/sessions\/[^/]+\/(minutes|events\.csv)$/ },
  { method: 'GET', path: /^\/api\/actions\/(log|queues)$/ },
  { method: 'POST', path: /^\/api\/actions\/queues\/[^/]+\/(skip|clear)$/ },
  { method: 'POST', path: /^\/api\/(events|rules\/test)$/ },
];

/** What an owner may not do: pairing, the devices, their audit, backups and restores. */
const OWNER_REFUSED = /^\/api\/(pairings|devices|audit|backup|restore)(\/.*)?$/;

/** Whether `signer` may call `method path` (the query is not looked at); the daemon decides the same way. */
export function allows(signer: Signer, method: string, path: string): boolean {
  const bare = path.split('?', 1)[0]?.toLowerCase() ?? '';
  const verb = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  if (signer === 'admin') return true;
  if (signer === 'owner') return !OWNER_REFUSED.test(bare);
  return MODERATOR_ALLOWS.some((rule) => rule.method === verb && rule.path.test(bare));
}

/** Only the admin key changes a secret (the OBS password, the YouTube key); an owner's saves keep them. */
export const changesSecrets = (signer: Signer): boolean => signer === 'admin';

/** The views `signer` gets, in the order of the navigation (phone-first on a phone). */
export function tabsFor(signer: Signer, phone: boolean): readonly { id: Tab; label: string }[] {
  const first = PHONE_FIRST.flatMap((id) => TABS.filter((t) => t.id === id));
  // A moderator's views are the phone's first four, in that order on every screen.
  if (signer === 'moderator') return first;
  return phone ? [...first, ...TABS.filter((t) => !PHONE_FIRST.includes(t.id))] : TABS;
}

/** The view an address without one opens: Overlays, or Status for a signer without it. */
export function homeTab(tabs: readonly { id: Tab }[]): Tab {
  return tabs.some((t) => t.id === 'overlays') ? 'overlays' : 'status';
}
