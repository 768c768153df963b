// Devices (Settings): pairing a phone (the code, the tunnel URL and its QR code, the time left, and each
// phone that sent the code as a prompt to approve or refuse), the paired devices with Revoke, and the
// audit of what devices changed.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type {
  AuditEntry,
  DeviceRole,
  DeviceView,
  PairingOffer,
  PendingPairing,
} from '../../../shared/protocol/devices.js';
import type { ControlApi } from './api.js';
import { auditSince } from './audit-api.js';
import { qrPath } from './public-overlay.js';
import { ConfirmButton, describeError, Notice } from './ui.js';
import { usePolling } from './use-polling.js';

/** How often the waiting phones are asked for while a code is open. */
const PAIRINGS_POLL_MS = 2000;
/** How often the paired devices are asked for while the panel is shown. */
const DEVICES_POLL_MS = 5000;

const ROLE_WORDS: Record<DeviceRole, string> = {
  moderator: 'Moderator (status, history, tests, skip and clear)',
  owner: 'Owner (everything but pairing, secrets and backups)',
};

/** "9:41" left of the code's 10 minutes. */
function timeLeft(expiresAt: string, now: number): string {
  const seconds = Math.max(0, Math.round((Date.parse(expiresAt) - now) / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

/** Audit entries shown at first, and added by each "Load more". */
const AUDIT_SHOWN_STEP = 50;

/**
 * What paired devices changed, newest first. Every entry the daemon keeps (10,000 at most) is read page
 * after page, oldest first as the daemon answers them; "Refresh" asks only for what came after the last
 * one, and "Load more" shows older ones.
 */
function DeviceAudit(props: { api: ControlApi }) {
  const { api } = props;
  const [entries, setEntries] = useState<AuditEntry[] | undefined>();
  const [last, setLast] = useState<number | undefined>();
  const [shown, setShown] = useState(AUDIT_SHOWN_STEP);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const load = useCallback(
    async (after: number | undefined) => {
      setBusy(true);
      setError(undefined);
      try {
        const since = await auditSince(api, after);
        setEntries((kept) => [...(after === undefined ? [] : (kept ?? [])), ...since.entries]);
        setLast(since.last);
      } catch (err) {
        setError(describeError(err));
      } finally {
        setBusy(false);
      }
    },
    [api],
  );
  useEffect(() => void load(undefined), [load]);

  const newestFirst = entries ? entries.slice(-shown).reverse() : [];
  return (
    <div class="grid" data-device-audit>
      <div class="row">
        <h4 id="device-audit-title">Changes made by devices</h4>
        <button type="button" onClick={() => void load(last)} disabled={busy}>
          Refresh
        </button>
      </div>
      <p class="muted">
        Every change a paired device made (test events and rule tests too), newest first. The newest 10,000
        are kept.
      </p>
      {error && <Notice kind="error">{error}</Notice>}
      {entries === undefined ? (
        !error && <p class="muted">Loading…</p>
      ) : entries.length === 0 ? (
        <p class="muted" data-no-audit>
          No device has changed anything.
        </p>
      ) : (
        <ul class="audit-list" aria-labelledby="device-audit-title">
          {newestFirst.map((e) => (
            <li key={e.id} data-audit-id={e.id}>
              <strong>{e.deviceName}</strong> <span class="muted">{when(e.at)}</span>
              <br />
              <code>
                {e.method} {e.path}
              </code>{' '}
              {e.detail && <span data-audit-detail>{e.detail} </span>}
              <span class="muted">{e.status}</span>
            </li>
          ))}
        </ul>
      )}
      {entries !== undefined && entries.length > shown && (
        <button type="button" onClick={() => setShown((n) => n + AUDIT_SHOWN_STEP)} data-audit-more>
          Load more
        </button>
      )}
    </div>
  );
}

function PairingQr(props: { url: string }) {
  const { size, d } = qrPath(props.url);
  return (
    <svg
      class="qr"
      viewBox={`0 0 ${size} ${size}`}
      role="img"
      aria-label="QR code of the pairing URL"
      shape-rendering="crispEdges"
      data-pairing-qr
    >
      <rect width={size} height={size} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}

export function DevicesPanel(props: { api: ControlApi }) {
  const { api } = props;
  const [role, setRole] = useState<DeviceRole>('moderator');
  const [offer, setOffer] = useState<PairingOffer | undefined>();
  const [waiting, setWaiting] = useState<PendingPairing[]>([]);
  const [devices, setDevices] = useState<DeviceView[] | undefined>();
  const [now, setNow] = useState(Date.now());
  const [note, setNote] = useState<{ kind: 'ok' | 'error'; text: string } | undefined>();
  const [busy, setBusy] = useState(false);

  const loadDevices = useCallback(
    () =>
      api.devices().then(setDevices, (err: unknown) => setNote({ kind: 'error', text: describeError(err) })),
    [api],
  );
  // The list follows the daemon while shown: a device's "Last seen" moves as it is used, and one revoked
  // or replaced elsewhere (the command line, a new pairing of the same phone) leaves it.
  usePolling(loadDevices, DEVICES_POLL_MS);

  const open = offer !== undefined && Date.parse(offer.expiresAt) > now;
  // While a code is open: the clock for the time left, and the phones that sent it, every 2 s.
  useEffect(() => {
    if (!offer) return;
    const tick = () => {
      setNow(Date.now());
      // Past the code's expiry nobody can still be waiting: stop asking.
      if (Date.now() >= Date.parse(offer.expiresAt)) return clearInterval(timer);
      api.pairings().then(setWaiting, () => {});
    };
    const timer = setInterval(tick, PAIRINGS_POLL_MS);
    tick();
    return () => clearInterval(timer);
  }, [api, offer]);
  useEffect(() => {
    if (offer && !open) setWaiting([]);
  }, [offer, open]);

  const start = async () => {
    setBusy(true);
    setNote(undefined);
    try {
      setOffer(await api.offerPairing(role));
      setNow(Date.now());
    } catch (err) {
      setNote({ kind: 'error', text: `No code: ${describeError(err)}` });
    } finally {
      setBusy(false);
    }
  };
  const answer = async (pairing: PendingPairing, approve: boolean) => {
    setNote(undefined);
    try {
      if (approve) await api.approvePairing(pairing.pairingId);
      else await api.refusePairing(pairing.pairingId);
      setWaiting((list) => list.filter((p) => p.pairingId !== pairing.pairingId));
      setNote({
        kind: 'ok',
        text: approve
          ? `${pairing.deviceName} is paired as ${pairing.role}.`
          : `${pairing.deviceName} was refused.`,
      });
      if (approve) setOffer(undefined);
      await loadDevices();
    } catch (err) {
      setNote({ kind: 'error', text: describeError(err) });
    }
  };
  const revoke = async (device: DeviceView) => {
    setNote(undefined);
    try {
      await api.revokeDevice(device.id);
      setNote({ kind: 'ok', text: `${device.name} can no longer reach the dashboard.` });
    } catch (err) {
      setNote({ kind: 'error', text: describeError(err) });
    }
    await loadDevices();
  };

  return (
    <section class="card grid devices" aria-labelledby="devices-title" data-devices>
      <h3 id="devices-title">Devices</h3>
      <p class="muted">
        A phone or a moderator's computer reaches this dashboard through the tunnel once you pair it here. The
        admin key never leaves this computer.
      </p>
      <div class="row">
        <label for="pair-role">Role</label>
        <select
          id="pair-role"
          value={role}
          onChange={(e) => setRole(e.currentTarget.value as DeviceRole)}
          disabled={busy}
        >
          <option value="moderator">{ROLE_WORDS.moderator}</option>
          <option value="owner">{ROLE_WORDS.owner}</option>
        </select>
        <button type="button" onClick={() => void start()} disabled={busy}>
          {open ? 'New code' : 'Pair a phone'}
        </button>
      </div>
      {offer && open && (
        <div class="pairing-offer" data-pairing-offer>
          {offer.url && <PairingQr url={offer.url} />}
          <div class="grid">
            <p>
              Code <strong data-pairing-code>{offer.code}</strong> ({offer.role}), valid for{' '}
              <span data-time-left>{timeLeft(offer.expiresAt, now)}</span>
            </p>
            {offer.url && (
              <p class="wrap">
                Scan the QR code or open <code data-pairing-url>{offer.url}</code> on the phone.
              </p>
            )}
          </div>
        </div>
      )}
      {offer && !open && <Notice kind="info">The code has expired: start again to pair a phone.</Notice>}
      {waiting.map((p) => (
        <div class="pairing-request" role="alert" key={p.pairingId} data-pairing-request={p.pairingId}>
          <p>
            <strong>{p.deviceName}</strong> ({p.ip}) asks to pair as {p.role}.
          </p>
          <div class="row">
            <button type="button" onClick={() => void answer(p, true)}>
              Approve
            </button>
            <button type="button" class="danger" onClick={() => void answer(p, false)}>
              Refuse
            </button>
          </div>
        </div>
      ))}
      {note && <Notice kind={note.kind}>{note.text}</Notice>}
      <h4>Paired devices</h4>
      {devices === undefined ? (
        <p class="muted">Loading…</p>
      ) : devices.length === 0 ? (
        <p class="muted" data-no-devices>
          No device is paired.
        </p>
      ) : (
        <ul class="device-list">
          {devices.map((d) => (
            <li key={d.id} data-device-id={d.id}>
              <div>
                <strong>{d.name}</strong> · {d.role}
                <br />
                <span class="muted">
                  Last seen {when(d.lastSeenAt)}
                  {d.lastIp ? ` from ${d.lastIp}` : ''}
                </span>
              </div>
              <ConfirmButton
                label="Revoke"
                question={`Revoke ${d.name}? It loses access at once.`}
                onConfirm={() => void revoke(d)}
              />
            </li>
          ))}
        </ul>
      )}
      <DeviceAudit api={api} />
    </section>
  );
}
