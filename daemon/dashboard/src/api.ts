// Client of the daemon's control API (decisions §3): the Bearer admin key on this computer, or a paired
// device's cookie and CSRF header through the tunnel (decisions-3 §11); JSON bodies, typed refusals.

import * as v from 'valibot';
import { type PendingRestore, PendingRestore as PendingRestoreSchema } from '../../../shared/backup.js';
import {
  type CredentialsReport,
  CredentialsReport as CredentialsReportSchema,
} from '../../../shared/credentials.js';
import { FileProblem as FileProblemSchema } from '../../../shared/data-files.js';
import {
  type DeviceRole,
  type DeviceSession,
  type DeviceView,
  DeviceView as DeviceViewSchema,
  type PairingOffer,
  PairingOffer as PairingOfferSchema,
  type PendingPairing,
  PendingPairing as PendingPairingSchema,
} from '../../../shared/protocol/devices.js';
import {
  ActionLog,
  type ActionLogEntry,
  CaughtUpEvents,
  type ClientCounts,
  ClientCounts as ClientCountsSchema,
  type DaemonStatus,
  DaemonStatus as DaemonStatusSchema,
  ErrorBody,
  type EventReceipt,
  EventReceipt as EventReceiptSchema,
  type KickConnectStart,
  KickConnectStart as KickConnectStartSchema,
  type KickLinkState,
  KickLinkState as KickLinkStateSchema,
  Leaderboard,
  type MediaEntry,
  MediaList,
  ObsTestResult,
  type Overlay,
  type OverlayInput,
  Overlay as OverlaySchema,
  parseWith,
  QueueList,
  type QueueState,
  QueueState as QueueStateSchema,
  RuleTestResult,
  SessionList,
  type SessionMinutes,
  SessionMinutes as SessionMinutesSchema,
  type SessionSummary,
  SpeechSample,
  type StreamEvent,
  type TwitchSignIn,
  TwitchSignIn as TwitchSignInSchema,
  type ViewerFigures,
  VoiceList,
} from '../../../shared/protocol/index.js';
import { type RelayStatus, RelayStatus as RelayStatusSchema } from '../../../shared/protocol/relay.js';
import { type Rule, type RuleList, RuleList as RuleListSchema } from '../../../shared/rules.js';
import {
  type SettingsInput,
  type SettingsView,
  SettingsView as SettingsViewSchema,
} from '../../../shared/settings.js';
import { allows, changesSecrets, type Signer } from './roles.js';

/** A refusal by the daemon (or a network failure, status 0), with the field the server named. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The dotted path before the first ": " of a `bad_request` message, e.g. `0.actions.0.widgetId`. */
    readonly field?: string,
  ) {
    super(message);
  }
}

/** The server words a bad field as `<field>: <reason>` (decisions §1); split it for display beside the field. */
function fieldOf(message: string): string | undefined {
  const match = /^([A-Za-z0-9_$.[\]-]+): /.exec(message);
  return match?.[1];
}

/**
 * The `relay` entries of a `/status` answer, one per public overlay: each read on its own, so one the
 * dashboard cannot read (a newer daemon's state) leaves the others shown; none when there is no list.
 */
export function relayEntries(status: unknown): RelayStatus[] {
  if (typeof status !== 'object' || status === null || !('relay' in status)) return [];
  const { relay } = status;
  if (!Array.isArray(relay)) return [];
  return relay.flatMap((entry: unknown) => {
    const parsed = parseWith(RelayStatusSchema, entry);
    return parsed.ok ? [parsed.value] : [];
  });
}

/** The admin key, or a paired device's session (its cookie goes along by itself). */
export type Credential = string | DeviceSession | undefined;

const CSRF_HEADER = 'X-Overlay-CSRF';

/**
 * The headers that say who asks: the admin key as a Bearer; for a device no key at all, and on every
 * request but a read the CSRF value of its session (decisions-3 §11).
 */
export function credentialHeaders(credential: Credential, method: string): Record<string, string> {
  if (typeof credential === 'string') return { Authorization: `Bearer ${credential}` };
  const read = method.toUpperCase() === 'GET' || method.toUpperCase() === 'HEAD';
  return credential && !read ? { [CSRF_HEADER]: credential.csrf } : {};
}

/** One media file as `GET /api/media` lists it. */
export type MediaItem = MediaEntry;

interface RequestOptions {
  method?: string;
  json?: unknown;
  body?: Blob;
  contentType?: string;
  /** Sent as If-Match: the save is refused (412 `conflict`) when the document changed since. */
  ifMatch?: string;
}

/** A document as the daemon has it now, with the tag a save must quote. */
interface Tagged<T> {
  value: T;
  etag: string | undefined;
}

export class ControlApi {
  /** Called on every 401 so the shell can say the key was refused (or the device revoked). */
  onUnauthorized: (error: ApiError) => void = () => {};
  /** Who signed in: the admin key, or a paired device's role. */
  readonly signer: Signer;
  /** The paired device this page speaks for, if it is one. */
  readonly device: DeviceSession | undefined;

  constructor(private readonly credential: Credential) {
    this.device = typeof credential === 'object' ? credential : undefined;
    this.signer = this.device?.role ?? 'admin';
  }

  /** Whether the daemon lets this signer make the request: what it refuses is not offered. */
  allows(method: string, path: string): boolean {
    return allows(this.signer, method, path);
  }

  /** Whether secrets (the OBS password, the YouTube key) may be changed from here: the admin key's alone. */
  get changesSecrets(): boolean {
    return changesSecrets(this.signer);
  }

  /** The local view of /status: a device asks for it under /api (through the tunnel /status is the public view). */
  get #statusPath(): string {
    return this.device ? '/api/status' : '/status';
  }

  /** The tag of the rules last read or saved here: every rules save quotes it. */
  #rulesEtag: string | undefined;

  async request(path: string, options: RequestOptions = {}): Promise<unknown> {
    return (await this.#send(path, options)).data;
  }

  async #send(
    path: string,
    options: RequestOptions = {},
  ): Promise<{ data: unknown; etag: string | undefined }> {
    const method = options.method ?? 'GET';
    const headers = credentialHeaders(this.credential, method);
    if (options.ifMatch) headers['If-Match'] = options.ifMatch;
    let body: BodyInit | undefined;
    if (options.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.body) {
      headers['Content-Type'] = options.contentType || 'application/octet-stream';
      body = options.body;
    }
    let response: Response;
    try {
      response = await fetch(path, { method, headers, body, cache: 'no-store', credentials: 'same-origin' });
    } catch {
      throw new ApiError(
        0,
        'network',
        'The overlay daemon is not reachable. Is overlay-daemon still running?',
      );
    }
    const text = await response.text();
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = undefined;
    }
    if (!response.ok) {
      const parsed = parseWith(ErrorBody, data);
      const code = parsed.ok ? parsed.value.error.code : `http_${response.status}`;
      const message = parsed.ok ? parsed.value.error.message : `${response.status} ${response.statusText}`;
      const error = new ApiError(response.status, code, message, fieldOf(message));
      if (response.status === 401) this.onUnauthorized(error);
      throw error;
    }
    return { data, etag: response.headers.get('ETag') ?? undefined };
  }

  private async typed<S extends v.GenericSchema>(schema: S, path: string, options?: RequestOptions) {
    return (await this.tagged(schema, path, options)).value;
  }

  private async tagged<S extends v.GenericSchema>(
    schema: S,
    path: string,
    options?: RequestOptions,
  ): Promise<Tagged<v.InferOutput<S>>> {
    const { data, etag } = await this.#send(path, options);
    const parsed = parseWith(schema, data);
    if (!parsed.ok)
      throw new ApiError(0, 'unexpected_response', `Unexpected answer from ${path}: ${parsed.error}`);
    return { value: parsed.value, etag };
  }

  status(): Promise<DaemonStatus> {
    return this.typed(DaemonStatusSchema, this.#statusPath);
  }
  /** The relay of each public overlay, from `/status` (read leniently: see `relayEntries`). */
  async relay(): Promise<RelayStatus[]> {
    return relayEntries(await this.request(this.#statusPath));
  }
  /** Publishes from here again an overlay another daemon took over; its relay entry now. */
  takeBackRelay(overlayId: string): Promise<RelayStatus> {
    return this.typed(RelayStatusSchema, `/api/relay/${encodeURIComponent(overlayId)}/take-back`, {
      method: 'POST',
    });
  }
  actionLog(): Promise<ActionLogEntry[]> {
    return this.typed(ActionLog, '/api/actions/log');
  }
  actionQueues(): Promise<QueueState[]> {
    return this.typed(QueueList, '/api/actions/queues');
  }
  /** `skip`: the queue moves on; `clear`: its waiting actions are dropped. */
  queue(name: string, verb: 'skip' | 'clear'): Promise<QueueState> {
    return this.typed(QueueStateSchema, `/api/actions/queues/${encodeURIComponent(name)}/${verb}`, {
      method: 'POST',
    });
  }
  settings(): Promise<SettingsView> {
    return this.typed(SettingsViewSchema, '/api/settings');
  }
  saveSettings(input: SettingsInput): Promise<SettingsView> {
    return this.typed(SettingsViewSchema, '/api/settings', { method: 'PUT', json: input });
  }
  /**
   * Reads the settings as the daemon has them now, changes them and puts the whole document back, every
   * secret kept (`{"set": true}`): a change made elsewhere since this page loaded is not undone.
   */
  async changeSettings(change: (current: SettingsView) => SettingsInput): Promise<SettingsView> {
    const current = await this.settings();
    const kept = {
      ...current,
      obs: { ...current.obs, password: { set: true } },
      youtube: { apiKey: { set: true } },
    };
    return this.saveSettings(change(kept));
  }
  /** The Twitch sign-in: signed in or not, or the code to enter while one is under way. */
  twitchSignIn(): Promise<TwitchSignIn> {
    return this.typed(TwitchSignInSchema, '/api/sources/twitch/sign-in');
  }
  /** Where the Twitch client id and the YouTube key in force come from (settings, the Gatekeeper, none yet). */
  credentials(): Promise<CredentialsReport> {
    return this.typed(CredentialsReportSchema, '/api/sources/credentials');
  }
  /** Starts Twitch's device code flow (503 `unavailable` while no client id is known). */
  startTwitchSignIn(): Promise<TwitchSignIn> {
    return this.typed(TwitchSignInSchema, '/api/sources/twitch/sign-in', { method: 'POST' });
  }
  /** Revokes and forgets the Twitch sign-in, or ends one under way. */
  async endTwitchSignIn(): Promise<void> {
    await this.request('/api/sources/twitch/sign-in', { method: 'DELETE' });
  }
  /** Whether Kick is linked at the Gatekeeper, and how the daemon's feed of its events stands. */
  kickLink(): Promise<KickLinkState> {
    return this.typed(KickLinkStateSchema, '/api/sources/kick/connect');
  }
  /** Starts linking Kick: the page on Kick to open. */
  startKickLink(): Promise<KickConnectStart> {
    return this.typed(KickConnectStartSchema, '/api/sources/kick/connect', { method: 'POST' });
  }
  /** Unlinks Kick at the Gatekeeper. */
  async endKickLink(): Promise<void> {
    await this.request('/api/sources/kick/connect', { method: 'DELETE' });
  }
  /** One connection attempt to OBS with the saved settings. */
  testObs(): Promise<ObsTestResult> {
    return this.typed(ObsTestResult, '/api/obs/test', { method: 'POST' });
  }
  /** The speech engine of the daemon's machine and its voices. */
  voices(): Promise<VoiceList> {
    return this.typed(VoiceList, '/api/tts/voices');
  }
  /** Renders a sample; the answer's `sound` plays from the daemon (/tts/<hash>.wav). */
  speakSample(input: { text?: string; voice?: string }): Promise<SpeechSample> {
    return this.typed(SpeechSample, '/api/tts/sample', { method: 'POST', json: input });
  }
  /** Runs a rule's actions once (saved or not) and answers with their outcomes. */
  testRule(rule: Rule): Promise<RuleTestResult> {
    return this.typed(RuleTestResult, '/api/rules/test', { method: 'POST', json: { rule } });
  }
  sessions(): Promise<SessionSummary[]> {
    return this.typed(SessionList, '/api/sessions');
  }
  /** What came in late in the last day (the feed's backlog after a night off): "while you were away". */
  async caughtUp(): Promise<CaughtUpEvents['events']> {
    return (await this.typed(CaughtUpEvents, '/api/events/caught-up')).events;
  }
  sessionMinutes(id: number): Promise<SessionMinutes> {
    return this.typed(SessionMinutesSchema, `/api/sessions/${id}/minutes`);
  }
  leaderboard(
    scope: 'session' | 'all',
    metric: 'diamonds' | 'likes' | 'chats' | 'points',
  ): Promise<ViewerFigures[]> {
    return this.typed(Leaderboard, `/api/leaderboard?scope=${scope}&metric=${metric}&limit=10`);
  }
  /** A file the daemon answers (a CSV, a backup), as a Blob: the key goes in a header, never in a link. */
  async download(path: string): Promise<Blob> {
    const headers = credentialHeaders(this.credential, 'GET');
    let response: Response;
    try {
      response = await fetch(path, { headers, cache: 'no-store', credentials: 'same-origin' });
    } catch {
      throw new ApiError(
        0,
        'network',
        'The overlay daemon is not reachable. Is overlay-daemon still running?',
      );
    }
    if (!response.ok) {
      const parsed = parseWith(ErrorBody, await response.json().catch(() => undefined));
      const error = new ApiError(
        response.status,
        parsed.ok ? parsed.value.error.code : `http_${response.status}`,
        parsed.ok ? parsed.value.error.message : `${response.status} ${response.statusText}`,
      );
      if (response.status === 401) this.onUnauthorized(error);
      throw error;
    }
    return response.blob();
  }
  /** Uploads a backup: checked now, put in place when the daemon next starts. */
  importBackup(file: Blob): Promise<unknown> {
    return this.request('/api/restore', { method: 'POST', body: file, contentType: 'application/gzip' });
  }
  /** Why rules.json on disk cannot be read, or null. */
  async rulesProblem(): Promise<string | null> {
    return (await this.typed(FileProblemSchema, '/api/rules/problem')).problem;
  }
  /** Whether an imported backup waits for the next start. */
  pendingRestore(): Promise<PendingRestore> {
    return this.typed(PendingRestoreSchema, '/api/restore');
  }
  /** Cancels the imported backup that waits for the next start. */
  async cancelRestore(): Promise<void> {
    await this.request('/api/restore', { method: 'DELETE' });
  }
  clients(): Promise<ClientCounts> {
    return this.typed(ClientCountsSchema, '/api/clients');
  }

  listOverlays(): Promise<Overlay[]> {
    return this.typed(v.array(OverlaySchema), '/api/overlays');
  }
  createOverlay(input: OverlayInput): Promise<Overlay> {
    return this.typed(OverlaySchema, '/api/overlays', { method: 'POST', json: input });
  }
  /** One overlay as the daemon has it now, with its ETag. */
  getOverlay(id: string): Promise<Tagged<Overlay>> {
    return this.tagged(OverlaySchema, `/api/overlays/${encodeURIComponent(id)}`);
  }
  /** Saves an overlay; with `etag`, only if nobody changed it since (412 `conflict` otherwise). */
  saveOverlay(overlay: Overlay, etag?: string): Promise<Tagged<Overlay>> {
    const { id, ...input } = overlay;
    return this.tagged(OverlaySchema, `/api/overlays/${encodeURIComponent(id)}`, {
      method: 'PUT',
      json: input,
      ...(etag ? { ifMatch: etag } : {}),
    });
  }
  async deleteOverlay(id: string): Promise<void> {
    await this.request(`/api/overlays/${encodeURIComponent(id)}`, { method: 'DELETE' });
  }

  async listRules(): Promise<RuleList> {
    const { value, etag } = await this.tagged(RuleListSchema, '/api/rules');
    this.#rulesEtag = etag;
    return value;
  }
  /** Saves the rules only if nobody changed them since they were read here (412 `conflict` otherwise). */
  async saveRules(rules: RuleList): Promise<void> {
    const { etag } = await this.tagged(RuleListSchema, '/api/rules', {
      method: 'PUT',
      json: rules,
      ...(this.#rulesEtag ? { ifMatch: this.#rulesEtag } : {}),
    });
    this.#rulesEtag = etag;
  }

  listMedia(): Promise<MediaItem[]> {
    return this.typed(MediaList, '/api/media');
  }
  async uploadMedia(name: string, file: Blob): Promise<void> {
    await this.request(`/api/media/${encodeURIComponent(name)}`, {
      method: 'PUT',
      body: file,
      contentType: file.type,
    });
  }
  async deleteMedia(name: string): Promise<void> {
    await this.request(`/api/media/${encodeURIComponent(name)}`, { method: 'DELETE' });
  }

  /** Starts pairing a phone: a one-time code and the tunnel URL (409 `conflict` while no tunnel runs). */
  offerPairing(role?: DeviceRole): Promise<PairingOffer> {
    return this.typed(PairingOfferSchema, '/api/pairings/offer', {
      method: 'POST',
      json: role ? { role } : {},
    });
  }
  /** The phones that sent a good code and wait for an answer. */
  pairings(): Promise<PendingPairing[]> {
    return this.typed(v.array(PendingPairingSchema), '/api/pairings');
  }
  /** Approves a waiting phone, with the offer's role unless `role` is given. */
  async approvePairing(pairingId: string, role?: DeviceRole): Promise<void> {
    await this.request(`/api/pairings/${encodeURIComponent(pairingId)}/approve`, {
      method: 'POST',
      json: role ? { role } : {},
    });
  }
  async refusePairing(pairingId: string): Promise<void> {
    await this.request(`/api/pairings/${encodeURIComponent(pairingId)}/refuse`, { method: 'POST' });
  }
  /** The paired devices still allowed in. */
  devices(): Promise<DeviceView[]> {
    return this.typed(v.array(DeviceViewSchema), '/api/devices');
  }
  /** Revokes a device at once (its open connections are closed). */
  async revokeDevice(id: string): Promise<void> {
    await this.request(`/api/devices/${encodeURIComponent(id)}`, { method: 'DELETE' });
  }

  /** 202 once accepted, with the rules the event fired (in rule order); journaled as a test event. */
  /** The `reset` command: a goal's progress, a counter's value or the top gifters back to zero. */
  async resetWidget(overlayId: string, widgetId: string): Promise<void> {
    await this.request(`/api/overlays/${encodeURIComponent(overlayId)}/commands`, {
      method: 'POST',
      json: { command: 'reset', widgetId },
    });
  }

  sendEvent(event: StreamEvent): Promise<EventReceipt> {
    return this.typed(EventReceiptSchema, '/api/events?test=true', { method: 'POST', json: event });
  }
}
