// What the dashboard shows to whom: the admin key sees every view; a paired device only what its role may do
// (decisions-3 §11), so a phone never offers a button the daemon would refuse.
import { roleAllows } from '../../../shared/device-roles.js';
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

/** Whether `signer` may call `method path`; a device by the daemon's own table (shared/device-roles.ts). */
export function allows(signer: Signer, method: string, path: string): boolean {
  return signer === 'admin' || roleAllows(signer, method, path);
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
