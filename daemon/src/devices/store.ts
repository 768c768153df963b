// devices.json: the paired devices, each with the SHA-256 of its cookie token (never the token), mode 0600,
// written whole and atomically. Changes are made one at a time, in order.
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import {
  type DeviceRecord,
  type DeviceRole,
  DevicesFile,
  type DeviceView,
} from '../../../shared/protocol/index.js';
import { readPrivateJson, writePrivateJson } from '../store/private-json-file.js';

export const DEVICES_FILE = 'devices.json';
/** How often a device's last sighting is written when its address stays the same. */
const TOUCH_EVERY_MS = 60_000;

export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Compares two strings in constant time for strings of the same length (the length itself is not secret). */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  if (x.length !== y.length) {
    // Spend the same work anyway, then say no.
    timingSafeEqual(x, x);
    return false;
  }
  return timingSafeEqual(x, y);
}

export const deviceView = ({ tokenHash: _hash, ...view }: DeviceRecord): DeviceView => view;

export class DeviceStore {
  private devices: DeviceRecord[] = [];
  private writes: Promise<void> = Promise.resolve();
  private readonly revokeListeners = new Set<(device: DeviceRecord) => void>();

  private keySeen: string | undefined;

  private constructor(
    readonly path: string,
    private readonly now: () => number,
    private readonly adminKey: (() => string) | undefined,
  ) {
    this.keySeen = adminKey?.();
  }

  /**
   * Opens the store of the data directory `root`; a devices.json that does not parse is an error, never
   * overwritten. With `adminKey`, a new admin key (`overlay-daemon new-key`) revokes every device before
   * the store is used again.
   */
  static async open(
    root: string,
    options: { now?: () => number; adminKey?: () => string } = {},
  ): Promise<DeviceStore> {
    const store = new DeviceStore(join(root, DEVICES_FILE), options.now ?? Date.now, options.adminKey);
    const read = await readPrivateJson(store.path, DevicesFile);
    if (!read.ok) throw new Error(`devices.json could not be read: ${read.error}`);
    store.devices = read.record?.devices ?? [];
    return store;
  }

  /** A new admin key revokes every device: checked before each use of the store. */
  private followKey(): void {
    if (!this.adminKey) return;
    const key = this.adminKey();
    if (key === this.keySeen) return;
    this.keySeen = key;
    if (this.devices.length === 0) return;
    const gone = this.devices;
    this.devices = [];
    this.save().catch(() => {});
    this.notify(gone);
  }

  private save(): Promise<void> {
    const snapshot = { devices: this.devices };
    const write = this.writes.then(() => writePrivateJson(this.path, snapshot));
    this.writes = write.catch(() => {});
    return write;
  }

  /** A new device and its token: the token goes into the cookie and is kept nowhere else. */
  async create(name: string, role: DeviceRole): Promise<{ device: DeviceView; token: string }> {
    this.followKey();
    const token = randomBytes(32).toString('base64url');
    const record: DeviceRecord = {
      id: randomUUID(),
      name,
      role,
      tokenHash: tokenHash(token),
      createdAt: new Date(this.now()).toISOString(),
      lastSeenAt: null,
      lastIp: null,
    };
    this.devices = [...this.devices, record];
    await this.save();
    return { device: deviceView(record), token };
  }

  /** The active device whose token is `cookieValue`, compared by hash in constant time. */
  authenticate(cookieValue: string | undefined): DeviceView | undefined {
    this.followKey();
    if (!cookieValue) return undefined;
    const hash = tokenHash(cookieValue);
    let found: DeviceRecord | undefined;
    for (const device of this.devices) if (constantTimeEqual(device.tokenHash, hash)) found = device;
    return found && deviceView(found);
  }

  /**
   * Notes that the device was seen now from `ip`. The file is written when the address changed or the
   * last note is a minute old, not on every request of a polling dashboard.
   */
  async touch(id: string, ip: string): Promise<void> {
    this.followKey();
    const now = this.now();
    const at = new Date(now).toISOString();
    let changed = false;
    this.devices = this.devices.map((d) => {
      if (d.id !== id) return d;
      const fresh = d.lastSeenAt !== null && now - Date.parse(d.lastSeenAt) < TOUCH_EVERY_MS;
      if (d.lastIp === ip && fresh) return d;
      changed = true;
      return { ...d, lastSeenAt: at, lastIp: ip };
    });
    if (changed) await this.save();
  }

  /**
   * The value a device's changes must carry in X-Overlay-CSRF: derived from its token's hash, so it
   * survives restarts, is known only to the daemon and the device's own session, and dies with it.
   */
  csrf(id: string): string | undefined {
    const device = this.devices.find((d) => d.id === id);
    return device && createHmac('sha256', device.tokenHash).update('X-Overlay-CSRF').digest('base64url');
  }

  list(): DeviceView[] {
    this.followKey();
    return this.devices.map(deviceView);
  }

  /** Revokes one device at once; false when there is none with that id. */
  async revoke(id: string): Promise<boolean> {
    this.followKey();
    const gone = this.devices.find((d) => d.id === id);
    if (!gone) return false;
    this.devices = this.devices.filter((d) => d.id !== id);
    await this.save();
    this.notify([gone]);
    return true;
  }

  /** Revokes every device (a new admin key); the number revoked. */
  async revokeAll(): Promise<number> {
    const gone = this.devices;
    this.devices = [];
    await this.save();
    this.notify(gone);
    return gone.length;
  }

  /** Called with each revoked device (to close its open sockets); returns the unsubscribe. */
  onRevoke(listener: (device: DeviceRecord) => void): () => void {
    this.revokeListeners.add(listener);
    return () => this.revokeListeners.delete(listener);
  }

  private notify(devices: DeviceRecord[]): void {
    for (const device of devices) for (const listener of this.revokeListeners) listener(device);
  }
}
