import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon } from '../../daemon/src/daemon.js';
import { writeLicence } from '../../daemon/src/licence/licence-file.js';
import { LicenceManager } from '../../daemon/src/licence/licence-manager.js';
import { DEFAULT_CONFIG } from '../../shared/config.js';
import { licenceSigner, trustSigner } from '../support/licence-signer.js';

const ISSUER = 'http://gatekeeper.invalid';
const signer = licenceSigner();

let dataDir: string;
let daemon: RunningDaemon;
let licence: LicenceManager;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'licence-limits-'));
  // Offline: the verdict comes from license.json and the bundled config, as when the Gatekeeper is unreachable.
  licence = new LicenceManager({ dataDir, issuer: ISSUER, log: () => {} });
  await trustSigner(dataDir, signer);
  daemon = await startDaemon({ port: 0, host: '127.0.0.1', dataDir, limits: licence, log: () => {} });
  await licence.load();
});
afterEach(async () => {
  await daemon?.close();
  await rm(dataDir, { recursive: true, force: true });
});

function api(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${daemon.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${daemon.adminKey}`, 'Content-Type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

const overlay = (name: string) => ({ name, width: 1280, height: 720 });
const rule = (id: string) => ({
  id,
  trigger: 'follow',
  actions: [{ overlayId: daemon.overlays.list()[0]?.id, widgetId: 'w', command: 'reset', payload: {} }],
});

describe('tier limits on the control API', () => {
  it('free tier: the overlay beyond maxOverlays is refused with 403 premium_required, naming the limit and the upgrade URL', async () => {
    const max = DEFAULT_CONFIG.tiers.free.maxOverlays;
    for (let n = daemon.overlays.list().length; n < max; n++) {
      expect((await api('POST', '/api/overlays', overlay(`o${n}`))).status).toBe(201);
    }
    const refused = await api('POST', '/api/overlays', overlay('one too many'));
    expect(refused.status).toBe(403);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('premium_required');
    expect(body.error.message).toContain(`allows ${max} overlays`);
    // The bundled config names no premium page (only the membership platform's home page): no link.
    expect(body.error.message).not.toMatch(/https?:\/\//);
    expect(daemon.overlays.list()).toHaveLength(max);
  });

  it('over the limit (after a downgrade) nothing is deleted: existing overlays stay editable, only creating is refused', async () => {
    await writeLicence(join(dataDir, 'license.json'), {
      token: signer.sign({ sub: 'u1', tier: 'premium', iss: ISSUER }),
      tier: 'premium',
      validated_at: new Date().toISOString(),
      user_id: 'u1',
      verdict: 'ok',
    });
    await licence.load();
    const max = DEFAULT_CONFIG.tiers.free.maxOverlays;
    for (let n = daemon.overlays.list().length; n < max + 2; n++) {
      expect((await api('POST', '/api/overlays', overlay(`p${n}`))).status).toBe(201);
    }
    // The membership lapses: the Gatekeeper's verdict becomes free.
    await writeLicence(join(dataDir, 'license.json'), {
      token: signer.sign({ sub: 'u1', tier: 'premium', iss: ISSUER }),
      tier: 'free',
      validated_at: new Date().toISOString(),
      user_id: 'u1',
      verdict: 'membership_inactive',
    });
    await licence.load();
    expect(licence.status().state).toBe('inactive');
    expect(daemon.overlays.list()).toHaveLength(max + 2);
    expect((await api('POST', '/api/overlays', overlay('more'))).status).toBe(403);
    const [first] = daemon.overlays.list();
    expect((await api('PUT', `/api/overlays/${first?.id}`, overlay('renamed'))).status).toBe(200);
  });

  it('rules: growing the list past maxRules is refused; the stored rules stay', async () => {
    const max = DEFAULT_CONFIG.tiers.free.maxRules;
    const rules = Array.from({ length: max }, (_, i) => rule(`r${i}`));
    expect((await api('PUT', '/api/rules', rules)).status).toBe(200);
    const refused = await api('PUT', '/api/rules', [...rules, rule('extra')]);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('premium_required');
    expect(((await (await api('GET', '/api/rules')).json()) as unknown[]).length).toBe(max);
  });
});
