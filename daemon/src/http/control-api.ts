// The local control API under /api/ (decisions §3): overlays, events, commands, rules, media, clients.
import { realpath, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Polka, Request } from 'polka';
import * as v from 'valibot';
import type { FileProblem } from '../../../shared/data-files.js';
import {
  type ChatPreview,
  type ClientCounts,
  type CommandReceipt,
  type EventReceipt,
  errorBody,
  type MediaSaved,
  OverlayCommandInput,
  OverlayInput,
  parseJsonWith,
  parseWith,
  type RuleTestResult,
  type SpeechSample,
  SpeechSampleInput,
  StreamEvent,
  Uuid,
  type VoiceList,
} from '../../../shared/protocol/index.js';
import { RuleList, RuleTestInput } from '../../../shared/rules.js';
import { applySettingsInput, changesASecret, SettingsInput, settingsView } from '../../../shared/settings.js';
import type { ObsConnection } from '../actions/obs.js';
import type { ActionRunner } from '../actions/runner.js';
import type { Speech } from '../actions/speech.js';
import type { AuditLog } from '../devices/audit.js';
import {
  isTheSavedRule,
  outcomesForDevice,
  restoreHidden,
  rulesForDevice,
  storedHeaderMoved,
} from '../devices/rule-secrets.js';
import { errorMessage } from '../errors.js';
import { type Ingest, type IngestReport, JournalWriteError } from '../ingest/ingest.js';
import type { Journal } from '../journal/journal.js';
import type { LimitDecision } from '../licence/limits.js';
import {
  checkMediaName,
  listMedia,
  MEDIA_MAX_BYTES,
  MediaOutside,
  mediaType,
  PayloadTooLarge,
  realMediaFile,
  writeMedia,
} from '../media/media.js';
import { type FiredAction, fireRule } from '../rules/engine.js';
import { sampleEvent } from '../rules/sample-event.js';
import type { KickEdgeFeed } from '../sources/kick/edge-events.js';
import type { TwitchSignInService } from '../sources/twitch/sign-in.js';
import type { DataDir } from '../store/data-dir.js';
import type { OverlayStore } from '../store/overlay-store.js';
import type { RulesStore } from '../store/rules-store.js';
import type { SettingsStore } from '../store/settings-store.js';
import { WriteFailed } from '../store/synced-json-file.js';
import type { Hub } from '../ws/hub.js';
import { mountAuditRoutes } from './audit-routes.js';
import { mountBackupRoutes } from './backup-routes.js';
import { JSON_MAX_DEPTH, jsonTooDeep, readBody } from './body.js';
import type { DeviceAccess } from './device-access.js';
import { etagOf, ifMatchHolds, overlayEtag } from './etag.js';
import { mountHistory } from './history.js';
import { mountKickRoutes } from './kick-routes.js';
import { mountPairingRoutes, type PairingRoutesContext } from './pairing-routes.js';
import { mountRelayRoutes, type RelayControl } from './relay-routes.js';
import { sendError, sendJson, sendNoContent } from './responses.js';
import { mountSourceRoutes } from './source-routes.js';

/** `?at=` of `POST /api/events`: milliseconds since the epoch, or an ISO 8601 time. */
const EventTimeQuery = v.pipe(
  v.string(),
  v.maxLength(64),
  v.transform((text) => (/^\d{1,15}$/.test(text) ? Number(text) : Date.parse(text))),
  v.check((ms) => Number.isFinite(ms), 'must be a time: milliseconds since the epoch or ISO 8601'),
);
export interface ControlApiContext {
  overlays: OverlayStore;
  rules: RulesStore;
  hub: Hub;
  mediaDir: string;
  /** The seam every stream event goes through (ingest.ts). */
  ingest: Ingest;
  log: (line: string) => void;
  /** Tier limits of the licence (licence/licence-manager.ts); absent: no limits. */
  limits?: CreationLimits | undefined;
  /** The actions of fired rules: their log and queues. */
  actions: ActionRunner;
  /** settings.json (GET/PUT /api/settings). */
  settings: SettingsStore;
  /** The data directory's paths (backups). */
  dataDir: DataDir;
  /** events.db: history, sessions, leaderboards. */
  journal: Journal;
  /** The OBS connection (its "test connection"). */
  obs: ObsConnection;
  /** Speech with the OS's voices (the voice list and the settings' sample). */
  speech: Speech;
  /** The Twitch sign-in of the Sources view. */
  twitchSignIn: TwitchSignInService;
  /** Kick's events through the Gatekeeper and the link behind them (undefined without a licence manager). */
  kickEdge?: KickEdgeFeed | undefined;
  /** Pairing phones and the paired devices (absent: no pairing routes). */
  pairing?: PairingRoutesContext | undefined;
  /** What paired devices changed (absent: no audit route). */
  audit?: AuditLog | undefined;
  /** The relay's publishers (taking an overlay back from another daemon); absent: no relay route. */
  relay?: RelayControl | undefined;
  /** Paired devices' sessions through the tunnel (device-access.ts); absent: no devices. */
  deviceAccess?: DeviceAccess | undefined;
  /** Lets only local control clients with the admin key through (front-door.ts createControlGuard). */
  controlGuard: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
}

/** How long "test this rule" waits for outcomes: a webhook's 5 s timeout and a little more. */
const RULE_TEST_WAIT_MS = 6000;

/** Refuses to create beyond the tier's limits; existing overlays and rules are never touched. */
export interface CreationLimits {
  canCreateOverlay(count: number): LimitDecision;
  canSaveRules(count: number, previousCount: number): LimitDecision;
  /** May an overlay become public (Premium only)? Without it nothing may: there is no licence to say Premium. */
  canPublish?(): LimitDecision;
}

/** Making an overlay public needs Premium; one that is public already stays editable whatever the tier. */
function publishRefused(
  limits: CreationLimits | undefined,
  wanted: boolean,
  was: boolean,
): LimitDecision | undefined {
  if (!wanted || was) return undefined;
  const decision = limits?.canPublish?.() ?? {
    ok: false,
    code: 'premium_required',
    message:
      "Public overlays (served to viewers by the Gatekeeper's relay) need a Premium licence: run overlay-daemon login.",
    upgradeUrl: undefined,
  };
  return decision.ok ? undefined : decision;
}

/** Reads and validates a JSON body; answers 413/400 itself and returns undefined then. */
async function readJson<S extends v.GenericSchema>(
  req: IncomingMessage,
  res: ServerResponse,
  schema: S,
): Promise<v.InferOutput<S> | undefined> {
  const body = await readBody(req);
  if (!body.ok) {
    sendError(res, 'payload_too_large', 'JSON bodies are limited to 1 MiB', { Connection: 'close' });
    return undefined;
  }
  if (jsonTooDeep(body.text)) {
    sendError(res, 'bad_request', `body: JSON nested deeper than ${JSON_MAX_DEPTH} levels`);
    return undefined;
  }
  const parsed = parseJsonWith(schema, body.text);
  if (!parsed.ok) {
    sendError(res, 'bad_request', parsed.error);
    return undefined;
  }
  return parsed.value;
}

/** 412 with the common body, code `conflict`, and the tag now in force. */
function sendPreconditionFailed(res: ServerResponse, etag: string): void {
  sendJson(
    res,
    412,
    errorBody('conflict', 'It changed since you loaded it (edited by hand or in another tab); load it again'),
    { ETag: etag },
  );
}

function overlayIdParam(req: Request): string | undefined {
  const id = req.params.id ?? '';
  return parseWith(Uuid, id).ok ? id.toLowerCase() : undefined;
}

/** The media name after /api/media/, decoded once; undefined when it is not a valid media path. */
function mediaNameParam(req: Request, mediaDir: string): string | undefined {
  const raw = req.path.slice('/api/media/'.length);
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  return checkMediaName(mediaDir, name).ok ? name : undefined;
}

export function mountControlApi(app: Polka, ctx: ControlApiContext): void {
  const { overlays, rules, hub } = ctx;
  // Mounted on the same (case-insensitive) prefix the routes below answer to, before them.
  app.use('/api', (req, res, next) => ctx.controlGuard(req, res, () => void next()));

  app.get('/api/overlays', (_req, res) => sendJson(res, 200, overlays.list()));

  app.post('/api/overlays', async (req, res) => {
    const input = await readJson(req, res, OverlayInput);
    if (!input) return;
    const allowed = ctx.limits?.canCreateOverlay(overlays.list().length) ?? { ok: true };
    if (!allowed.ok) return sendError(res, allowed.code, allowed.message);
    const unpublishable = publishRefused(ctx.limits, input.public, false);
    if (unpublishable && !unpublishable.ok) return sendError(res, unpublishable.code, unpublishable.message);
    let overlay: Awaited<ReturnType<OverlayStore['create']>>;
    try {
      overlay = await overlays.create(input);
    } catch (err) {
      // A full disk: refused in words, and nothing was created.
      if (err instanceof WriteFailed) return sendError(res, 'unavailable', err.message);
      throw err;
    }
    sendJson(res, 201, overlay, { Location: `/api/overlays/${overlay.id}` });
  });

  app.get('/api/overlays/:id', (req, res) => {
    const id = overlayIdParam(req);
    const overlay = id ? overlays.get(id) : undefined;
    if (!overlay) return sendError(res, 'not_found', 'No overlay has that id');
    sendJson(res, 200, overlay, { ETag: overlayEtag(overlay), 'Cache-Control': 'no-cache' });
  });

  app.put('/api/overlays/:id', async (req, res) => {
    const id = overlayIdParam(req);
    const current = id ? overlays.get(id) : undefined;
    if (!id || !current) return sendError(res, 'not_found', 'No overlay has that id');
    const input = await readJson(req, res, OverlayInput);
    if (!input) return;
    // Checked after the body is read, against the overlay in force now (a hand edit, another tab).
    const inForce = overlays.get(id) ?? current;
    if (!ifMatchHolds(req, overlayEtag(inForce))) return sendPreconditionFailed(res, overlayEtag(inForce));
    const unpublishable = publishRefused(ctx.limits, input.public, inForce.public === true);
    if (unpublishable && !unpublishable.ok) return sendError(res, unpublishable.code, unpublishable.message);
    // A layout save: the live widget values (goal progress, counters, top gifters) stay those in force.
    const result = await overlays.saveLayout({ id, ...input });
    if (result.ok) return sendJson(res, 200, result.overlay, { ETag: overlayEtag(result.overlay) });
    const code = { not_found: 'not_found', unreadable: 'conflict', unavailable: 'unavailable' } as const;
    sendError(res, code[result.reason], result.message);
  });

  app.delete('/api/overlays/:id', async (req, res) => {
    const id = overlayIdParam(req);
    if (!id || !(await overlays.remove(id))) return sendError(res, 'not_found', 'No overlay has that id');
    sendNoContent(res);
  });

  app.post('/api/overlays/:id/commands', async (req, res) => {
    const id = overlayIdParam(req);
    if (!id || !overlays.get(id)) return sendError(res, 'not_found', 'No overlay has that id');
    const command = await readJson(req, res, OverlayCommandInput);
    if (!command) return;
    const delivered = hub.sendCommand(id, command);
    sendJson(res, 202, { delivered } satisfies CommandReceipt);
  });

  app.post('/api/events', async (req, res) => {
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    // `?test=true`: a test event (the test panel, the `event` command), marked in the journal.
    const test = query.get('test');
    if (test !== null && test !== 'true') return sendError(res, 'bad_request', 'test: must be true');
    // `?at=`: when it happened (a tool passing on what it kept); one more than 5 minutes old is caught up.
    const atText = query.get('at');
    const at = atText === null ? undefined : parseWith(EventTimeQuery, atText);
    if (at && !at.ok) return sendError(res, 'bad_request', `at: ${at.error}`);
    const event = await readJson(req, res, StreamEvent);
    if (!event) return;
    let report: IngestReport;
    try {
      report = ctx.ingest(event, {
        requireJournal: true,
        test: test === 'true',
        ...(at?.ok ? { at: at.value } : {}),
      });
    } catch (err) {
      if (err instanceof JournalWriteError) return sendError(res, 'unavailable', err.message);
      throw err;
    }
    sendJson(res, 202, { accepted: true, ...report } satisfies EventReceipt);
  });

  /** A paired device reads rules and outcomes with webhook tokens and stored headers hidden (rule-secrets.ts). */
  const deviceAsks = (req: IncomingMessage) => ctx.deviceAccess?.deviceOf(req) !== undefined;
  /** The rules as `req` reads them, and so the version its If-Match quotes. */
  const rulesAsRead = (req: IncomingMessage, list: RuleList) =>
    deviceAsks(req) ? rulesForDevice(list) : list;

  app.get('/api/rules', (req, res) => {
    const list = rulesAsRead(req, rules.current());
    sendJson(res, 200, list, { ETag: etagOf(list), 'Cache-Control': 'no-cache' });
  });

  // Whether rules.json reads: the Rules view says so when it opens, not only when a save is refused.
  app.get('/api/rules/problem', (_req, res) => {
    const reason = rules.unreadable;
    sendJson(res, 200, {
      problem:
        reason === undefined
          ? null
          : `${ctx.dataDir.rulesFile} could not be read (${reason}); the rules in force are the last good ones, and saving is refused until the file is fixed or removed`,
    } satisfies FileProblem);
  });

  app.put('/api/rules', async (req, res) => {
    const sent = await readJson(req, res, RuleList);
    if (!sent) return;
    const inForce = etagOf(rulesAsRead(req, rules.current()));
    if (!ifMatchHolds(req, inForce)) return sendPreconditionFailed(res, inForce);
    const allowed = ctx.limits?.canSaveRules(sent.length, rules.current().length) ?? { ok: true };
    if (!allowed.ok) return sendError(res, allowed.code, allowed.message);
    // A device sends back hidden what it read hidden: the stored values stay.
    const restored = deviceAsks(req)
      ? restoreHidden(rules.current(), sent)
      : { ok: true as const, rules: sent };
    if (!restored.ok) return sendError(res, 'bad_request', restored.message);
    const list = restored.rules;
    // Sending a stored credential elsewhere is changing it: the streamer's own dashboard only (§11).
    const moved = deviceAsks(req) ? storedHeaderMoved(rules.current(), list) : undefined;
    if (moved !== undefined)
      return sendError(
        res,
        'forbidden',
        `Only the streamer’s own dashboard may send a stored header to another address: ${moved}`,
      );
    const result = await rules.replace(list);
    if (result.ok) {
      const saved = rulesAsRead(req, result.rules);
      return sendJson(res, 200, saved, { ETag: etagOf(saved) });
    }
    sendError(res, result.reason === 'unavailable' ? 'unavailable' : 'conflict', result.message);
  });

  app.get('/api/clients', (_req, res) => {
    const counts = hub.clientCounts();
    const clients: Record<string, number> = {};
    for (const overlay of overlays.list()) clients[overlay.id] = counts[overlay.id] ?? 0;
    sendJson(res, 200, { clients } satisfies ClientCounts);
  });

  // Settings, whole, with secrets as {set}; a PUT that does not validate changes nothing.
  // "Test this rule": its actions once, for a sample event, conditions and cooldowns aside; the answer
  // waits for their outcomes (a little longer than a webhook's timeout).
  app.post('/api/rules/test', async (req, res) => {
    const input = await readJson(req, res, RuleTestInput);
    if (!input) return;
    const device = ctx.deviceAccess?.deviceOf(req);
    const id = 'ruleId' in input ? input.ruleId : input.rule.id;
    const saved = rules.current().find((r) => r.id === id);
    if ('ruleId' in input && !saved) return sendError(res, 'not_found', `No saved rule has the id "${id}"`);
    // A paired device runs only what the streamer saved: a rule of its own making could send a webhook
    // anywhere from the streamer's computer (§11). What runs is the saved rule, stored headers and all.
    if (device && 'rule' in input && !(saved && isTheSavedRule(input.rule, saved)))
      return sendError(
        res,
        'forbidden',
        saved
          ? `A paired device tests only saved rules, and rule "${id}" differs from the saved one: save it first`
          : `A paired device tests only saved rules, and none has the id "${id}": save it first`,
      );
    const rule = device || 'ruleId' in input ? saved : input.rule;
    if (!rule) return sendError(res, 'not_found', `No saved rule has the id "${id}"`);
    if (device) ctx.deviceAccess?.noteForAudit(req, `rule "${rule.name || rule.id}" (${rule.id})`);
    const event = sampleEvent(rule);
    let fired: FiredAction[];
    try {
      fired = fireRule(rule, event);
    } catch (err) {
      return sendError(res, 'bad_request', `rule: ${errorMessage(err)}`);
    }
    // A chat action shows what it would send; the test sends none.
    const chat: ChatPreview[] = [];
    for (const action of fired)
      if (action.kind === 'chat' && !action.preview) {
        chat.push(...ctx.actions.previewChat(action));
        action.preview = true;
      }
    const done = await ctx.actions.test(fired, RULE_TEST_WAIT_MS);
    const outcomes = deviceAsks(req) ? outcomesForDevice(done) : done;
    sendJson(res, 200, {
      event,
      outcomes,
      unfinished: fired.length - outcomes.length,
      ...(chat.length > 0 ? { chat } : {}),
    } satisfies RuleTestResult);
  });

  // Settings, whole, with secrets as {set}, an ETag like overlays and rules. A PUT is refused with 409
  // while settings.json on disk does not read (a hand edit in progress is never written over), 412 when
  // If-Match names another version, 503 when it cannot be written; a secret it leaves out is kept.
  const settingsEtag = () => etagOf(settingsView(ctx.settings.current()));
  app.get('/api/settings', (_req, res) =>
    sendJson(res, 200, settingsView(ctx.settings.current()), {
      ETag: settingsEtag(),
      'Cache-Control': 'no-cache',
    }),
  );
  app.get('/api/settings/problem', (_req, res) => {
    const reason = ctx.settings.unreadable;
    sendJson(res, 200, {
      problem:
        reason === undefined
          ? null
          : `${ctx.settings.file} could not be read (${reason}); the settings in force are the last good ones, and saving is refused until the file is fixed or removed`,
    } satisfies FileProblem);
  });
  app.put('/api/settings', async (req, res) => {
    const input = await readJson(req, res, SettingsInput);
    if (!input) return;
    const unreadable = ctx.settings.unreadable;
    if (unreadable !== undefined)
      return sendError(
        res,
        'conflict',
        `${ctx.settings.file} could not be read (${unreadable}); fix or remove the file first, nothing was saved`,
      );
    if (!ifMatchHolds(req, settingsEtag())) return sendPreconditionFailed(res, settingsEtag());
    const next = applySettingsInput(input, ctx.settings.current());
    // A paired device may save settings only as they keep every secret (decisions-3 §11).
    if (ctx.deviceAccess?.deviceOf(req) && changesASecret(ctx.settings.current(), next)) {
      return sendError(
        res,
        'forbidden',
        'Only the streamer’s own dashboard may change a password or key, or the OBS or Streamer.bot address it is sent to',
      );
    }
    const result = await ctx.settings.replace(next);
    if (!result.ok)
      return sendError(res, result.reason === 'unavailable' ? 'unavailable' : 'conflict', result.message);
    sendJson(res, 200, settingsView(result.settings), { ETag: settingsEtag() });
  });

  app.post('/api/obs/test', async (_req, res) => sendJson(res, 200, await ctx.obs.test()));

  // What actions did (newest last), and their queues.
  app.get('/api/actions/log', (req, res) => {
    const log = ctx.actions.log();
    sendJson(res, 200, deviceAsks(req) ? outcomesForDevice(log) : log);
  });
  app.get('/api/actions/queues', (_req, res) => sendJson(res, 200, ctx.actions.queues()));
  for (const verb of ['skip', 'clear'] as const) {
    app.post(`/api/actions/queues/:name/${verb}`, (req, res) => {
      const name = req.params.name ?? '';
      const state = verb === 'skip' ? ctx.actions.skip(name) : ctx.actions.clear(name);
      if (!state) return sendError(res, 'not_found', `No queue is named "${name}"`);
      sendJson(res, 200, state);
    });
  }

  // The speech engine's voices and a sample, for the Settings view.
  app.get('/api/tts/voices', async (_req, res) => {
    const engine = await ctx.speech.engine();
    sendJson(res, 200, {
      engine: engine?.name ?? null,
      voices: await ctx.speech.voices(),
    } satisfies VoiceList);
  });
  app.post('/api/tts/sample', async (req, res) => {
    const input = await readJson(req, res, SpeechSampleInput);
    if (!input) return;
    try {
      const hash = await ctx.speech.render(input.text, { voice: input.voice, rate: input.rate });
      sendJson(res, 200, { sound: `/tts/${hash}.wav` } satisfies SpeechSample);
    } catch (err) {
      sendError(res, 'unavailable', errorMessage(err));
    }
  });

  mountHistory(app, ctx.journal);
  mountSourceRoutes(app, ctx.twitchSignIn);
  mountKickRoutes(app, ctx.kickEdge);
  if (ctx.pairing) mountPairingRoutes(app, ctx.pairing);
  if (ctx.audit) mountAuditRoutes(app, ctx.audit);
  if (ctx.relay) mountRelayRoutes(app, ctx.relay);
  mountBackupRoutes(app, ctx.dataDir, ctx.log);

  app.get('/api/media', async (_req, res) => sendJson(res, 200, await listMedia(ctx.mediaDir)));

  app.put('/api/media/*', async (req, res) => {
    const name = mediaNameParam(req, ctx.mediaDir);
    if (name === undefined)
      return sendError(
        res,
        'bad_request',
        'name: must be a media file name (letters, digits, . _ - space /), without ..',
      );
    const type = mediaType(name);
    if (!type)
      return sendError(
        res,
        'bad_request',
        'name: the extension must be that of an image, audio or video file',
      );
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MEDIA_MAX_BYTES) {
      return sendError(res, 'payload_too_large', 'media files are limited to 20 MiB', {
        Connection: 'close',
      });
    }
    const checked = checkMediaName(ctx.mediaDir, name);
    if (!checked.ok) return sendError(res, 'bad_request', 'name: not allowed');
    try {
      const { replaced, size } = await writeMedia(ctx.mediaDir, checked.path, req);
      sendJson(res, replaced ? 200 : 201, { name, size, type } satisfies MediaSaved);
    } catch (err) {
      if (err instanceof MediaOutside) {
        return sendError(res, 'forbidden', 'name: the folder leads outside media/', { Connection: 'close' });
      }
      if (err instanceof PayloadTooLarge) {
        return sendError(res, 'payload_too_large', 'media files are limited to 20 MiB', {
          Connection: 'close',
        });
      }
      // Bad names are the client's, never a 500.
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENAMETOOLONG')
        return sendError(res, 'bad_request', 'name: too long for the file system', { Connection: 'close' });
      if (code === 'EISDIR' || code === 'ENOTDIR' || code === 'EEXIST' || code === 'ENOTEMPTY')
        return sendError(
          res,
          'conflict',
          'name: a folder has that name, or a file stands where a folder should',
          {
            Connection: 'close',
          },
        );
      throw err;
    }
  });

  app.delete('/api/media/*', async (req, res) => {
    const name = mediaNameParam(req, ctx.mediaDir);
    const checked = name === undefined ? undefined : checkMediaName(ctx.mediaDir, name);
    if (!checked?.ok || name === undefined) return sendError(res, 'not_found', 'No media file has that name');
    // The real path, so a symlinked folder inside media/ cannot lead the delete outside it.
    const file = await realMediaFile(name, checked.path, () => realpath(ctx.mediaDir));
    if (!file.ok) {
      return file.status === 403
        ? sendError(res, 'forbidden', 'name: the path leads outside media/')
        : sendError(res, 'not_found', 'No media file has that name');
    }
    try {
      await rm(file.path);
    } catch {
      return sendError(res, 'not_found', 'No media file has that name');
    }
    sendNoContent(res);
  });
}
