// Paired devices: the pairing offer, the phone's pairing request, approval and the device list.
import * as v from 'valibot';

export const DeviceRole = v.picklist(['owner', 'moderator']);
export type DeviceRole = v.InferOutput<typeof DeviceRole>;

/** `POST /api/pairings/offer` (admin key); the role defaults to moderator. */
export const PairingOfferInput = v.strictObject({ role: v.optional(DeviceRole) });
/** `POST /api/pairings/:id/approve`; the role defaults to the offer's. */
export const PairingApproveInput = v.strictObject({ role: v.optional(DeviceRole) });
/** `POST /pair` from the phone. */
export const PairRequestInput = v.strictObject({
  code: v.pipe(v.string(), v.maxLength(64)),
  deviceName: v.pipe(v.string(), v.trim(), v.minLength(1, 'deviceName is empty'), v.maxLength(64)),
});

export const PairingOffer = v.object({
  code: v.string(),
  url: v.nullable(v.string()),
  role: DeviceRole,
  expiresAt: v.string(),
});
export type PairingOffer = v.InferOutput<typeof PairingOffer>;

export const PendingPairing = v.object({
  pairingId: v.string(),
  deviceName: v.string(),
  ip: v.string(),
  role: DeviceRole,
  at: v.string(),
});
export type PendingPairing = v.InferOutput<typeof PendingPairing>;

export const PairingState = v.picklist(['waiting', 'refused', 'expired', 'approved']);
export type PairingState = v.InferOutput<typeof PairingState>;

/** A device as `GET /api/devices` lists it (never its token hash). */
export const DeviceView = v.object({
  id: v.string(),
  name: v.string(),
  role: DeviceRole,
  createdAt: v.string(),
  lastSeenAt: v.nullable(v.string()),
  lastIp: v.nullable(v.string()),
});
export type DeviceView = v.InferOutput<typeof DeviceView>;

/** devices.json: each device with the SHA-256 (hex) of its cookie value, never the value. */
export const DeviceRecord = v.object({
  ...DeviceView.entries,
  tokenHash: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
});
export type DeviceRecord = v.InferOutput<typeof DeviceRecord>;
export const DevicesFile = v.object({ devices: v.array(DeviceRecord) });

/** One accepted (2xx) request of a paired device other than `GET`, as `GET /api/audit` lists it. */
export const AuditEntry = v.object({
  id: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  /** ISO time the request was answered. */
  at: v.string(),
  deviceId: v.string(),
  deviceName: v.string(),
  method: v.string(),
  path: v.string(),
  status: v.pipe(v.number(), v.integer()),
  /** What the request acted on, when its path does not say: the rule a "test this rule" ran. */
  detail: v.optional(v.string()),
});
export type AuditEntry = v.InferOutput<typeof AuditEntry>;

/** `GET /api/audit?after=<id>&limit=<≤500>` (admin key): oldest first; `next` is the `after` of the next page. */
export const AuditPage = v.object({
  entries: v.array(AuditEntry),
  next: v.nullable(v.pipe(v.number(), v.safeInteger(), v.minValue(1))),
});
export type AuditPage = v.InferOutput<typeof AuditPage>;

/** `GET /api/session` of a paired device: its changes carry `csrf` in the X-Overlay-CSRF header. */
export const DeviceSession = v.object({
  deviceId: v.string(),
  name: v.string(),
  role: DeviceRole,
  csrf: v.string(),
});
export type DeviceSession = v.InferOutput<typeof DeviceSession>;
