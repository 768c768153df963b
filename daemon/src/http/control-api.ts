// The local control API under /api/ (decisions §3), behind the guard that lets only the admin key and
// paired devices in: one file of routes per subject (overlays, events, rules, settings, actions, speech,
// history, sources, Kick, pairing, audit, relay, backups, media).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Polka } from 'polka';
import type { ObsConnection } from '../actions/obs.js';
import type { ActionRunner } from '../actions/runner.js';
import type { Speech } from '../actions/speech.js';
import type { AuditLog } from '../devices/audit.js';
import type { Ingest } from '../ingest/ingest.js';
import type { Journal } from '../journal/journal.js';
import type { KickEdgeFeed } from '../sources/kick/edge-events.js';
import type { TwitchSignInService } from '../sources/twitch/sign-in.js';
import type { DataDir } from '../store/data-dir.js';
import type { OverlayStore } from '../store/overlay-store.js';
import type { RulesStore } from '../store/rules-store.js';
import type { SettingsStore } from '../store/settings-store.js';
import type { Hub } from '../ws/hub.js';
import { mountActionRoutes } from './action-routes.js';
import { mountAuditRoutes } from './audit-routes.js';
import { mountBackupRoutes } from './backup-routes.js';
import type { CreationLimits } from './creation-limits.js';
import type { DeviceAccess } from './device-access.js';
import { mountEventRoutes } from './event-routes.js';
import { mountHistory } from './history.js';
import { mountKickRoutes } from './kick-routes.js';
import { mountMediaRoutes } from './media-routes.js';
import { mountOverlayRoutes } from './overlay-routes.js';
import { mountPairingRoutes, type PairingRoutesContext } from './pairing-routes.js';
import { mountRelayRoutes, type RelayControl } from './relay-routes.js';
import { mountRuleRoutes } from './rule-routes.js';
import { mountSettingsRoutes } from './settings-routes.js';
import { mountSourceRoutes } from './source-routes.js';
import { mountSpeechRoutes } from './speech-routes.js';

export type { CreationLimits } from './creation-limits.js';

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

export function mountControlApi(app: Polka, ctx: ControlApiContext): void {
  // Mounted on the same (case-insensitive) prefix the routes below answer to, before them.
  app.use('/api', (req, res, next) => ctx.controlGuard(req, res, () => void next()));
  mountOverlayRoutes(app, ctx);
  mountEventRoutes(app, ctx);
  mountRuleRoutes(app, ctx);
  mountSettingsRoutes(app, ctx);
  mountActionRoutes(app, ctx);
  mountSpeechRoutes(app, ctx);
  mountHistory(app, ctx.journal);
  mountSourceRoutes(app, ctx.twitchSignIn);
  mountKickRoutes(app, ctx.kickEdge);
  if (ctx.pairing) mountPairingRoutes(app, ctx.pairing);
  if (ctx.audit) mountAuditRoutes(app, ctx.audit);
  if (ctx.relay) mountRelayRoutes(app, ctx.relay);
  mountBackupRoutes(app, ctx.dataDir, ctx.log);
  mountMediaRoutes(app, ctx);
}
