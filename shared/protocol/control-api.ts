// The control API's answers (decisions §3): the daemon produces exactly these shapes and
// the dashboard parses them, so neither guesses at the other's.
import * as v from 'valibot';
import { CHAT_PLATFORMS, SOURCE_PLATFORMS } from '../platforms.js';
import { TtsSound } from './commands.js';
import { PlatformSchema, StreamEvent } from './events.js';
import { Tier } from './gatekeeper.js';
import { MediaPath, VoiceId } from './primitives.js';
import { RelayStatus } from './relay.js';

/** A built-in chat command's answer to a test event: shown where the test was made, never posted to chat. */
export const TestChatAnswer = v.object({
  /** The trigger in force, e.g. `!points`. */
  command: v.string(),
  platform: PlatformSchema,
  text: v.string(),
});
export type TestChatAnswer = v.InferOutput<typeof TestChatAnswer>;

/**
 * `POST /api/events` → 202: the rules the event fired, in rule order; for a test event (`?test=true`)
 * the answers of the chat commands it asked for, which were not sent.
 */
export const EventReceipt = v.object({
  accepted: v.literal(true),
  firedRules: v.array(v.string()),
  chatAnswers: v.optional(v.array(TestChatAnswer)),
});
export type EventReceipt = v.InferOutput<typeof EventReceipt>;

/** `POST /api/overlays/:id/commands` → 202: how many open pages got it. */
export const CommandReceipt = v.object({ delivered: v.pipe(v.number(), v.safeInteger(), v.minValue(0)) });
export type CommandReceipt = v.InferOutput<typeof CommandReceipt>;

/** One file of `GET /api/media`. */
export const MediaEntry = v.object({
  name: MediaPath,
  size: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  type: v.string(),
  /** ISO 8601 time of the last change. */
  modified: v.string(),
});
export type MediaEntry = v.InferOutput<typeof MediaEntry>;
export const MediaList = v.array(MediaEntry);

/** `PUT /api/media/<name>` → 200/201. */
export const MediaSaved = v.object({
  name: MediaPath,
  size: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  type: v.string(),
});
export type MediaSaved = v.InferOutput<typeof MediaSaved>;

/** `GET /api/clients`: subscribed connections per overlay id, for every overlay. */
export const ClientCounts = v.object({
  clients: v.record(v.string(), v.pipe(v.number(), v.safeInteger(), v.minValue(0))),
});
export type ClientCounts = v.InferOutput<typeof ClientCounts>;

/** The licence as the daemon last verified it. */
export const LICENCE_STATES = ['signed_out', 'valid', 'grace', 'expired', 'inactive', 'invalid'] as const;
export const LicenceStatus = v.object({
  tier: Tier,
  /** Until when the current tier holds without another successful validation (null on the free tier). */
  valid_until: v.nullable(v.string()),
  last_validated_at: v.nullable(v.string()),
  state: v.picklist(LICENCE_STATES),
});
export type LicenceStatus = v.InferOutput<typeof LicenceStatus>;

/** The tunnel as the daemon runs it: the cloudflared connector it supervises (decisions §3). */
export const CONNECTOR_STATES = ['stopped', 'running', 'restarting'] as const;
export const ConnectorStatus = v.object({
  public_url: v.nullable(v.string()),
  connector: v.picklist(CONNECTOR_STATES),
  /** Why there is no connector running, when there is a reason worth saying. */
  reason: v.optional(v.string()),
});
export type ConnectorStatus = v.InferOutput<typeof ConnectorStatus>;

/** A live-event source (TikTok LIVE) and its connection. */
export const SOURCE_STATES = ['disconnected', 'connecting', 'connected', 'reconnecting', 'offline'] as const;
export const SourceStatus = v.object({
  source: v.literal('tiktok'),
  username: v.string(),
  state: v.picklist(SOURCE_STATES),
  /** Failed attempts since the last stable connection. */
  attempts: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  lastError: v.optional(v.string()),
  /** ISO 8601 time of lastError. */
  lastErrorAt: v.optional(v.string()),
  /** ISO 8601 time of the current connection, while connected. */
  connectedSince: v.optional(v.string()),
  /** Milliseconds until the next attempt, while reconnecting or offline. */
  retryInMs: v.optional(v.pipe(v.number(), v.minValue(0))),
  /**
   * The last connection losses that ended in a reconnect, newest last: when, for how
   * long, and how many missed messages the room's recent messages gave back (`recovered: true`).
   */
  gaps: v.optional(
    v.array(
      v.object({
        at: v.string(),
        durationMs: v.pipe(v.number(), v.minValue(0)),
        recovered: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
      }),
    ),
  ),
});
export type SourceStatus = v.InferOutput<typeof SourceStatus>;

/**
 * Every live source the daemon reads, in `/status` `sources`: what it is and, in a
 * streamer's words, how it is doing (`detail`, e.g. "quota used up for today"); `since` is the ISO time
 * the state began.
 */
export const SOURCE_REPORT_STATES = [
  'connecting',
  'connected',
  'reconnecting',
  'backoff',
  'error',
  'offline',
  'off',
] as const;
export type SourceReportState = (typeof SOURCE_REPORT_STATES)[number];
export const SourceReport = v.object({
  platform: v.picklist(SOURCE_PLATFORMS),
  channel: v.string(),
  state: v.picklist(SOURCE_REPORT_STATES),
  detail: v.optional(v.string()),
  since: v.optional(v.string()),
});
export type SourceReport = v.InferOutput<typeof SourceReport>;

/**
 * The Twitch sign-in as the dashboard drives it: `GET`, `POST` (starts the device code
 * flow: open `verificationUri` and enter `userCode` before `expiresAt`) and `DELETE` (revokes and forgets)
 * on `/api/sources/twitch/sign-in`. The same sign-in as `overlay-daemon connect twitch`.
 */
export const TWITCH_SIGN_IN_STATES = ['signed-out', 'pending', 'signed-in', 'failed'] as const;
export const TwitchSignIn = v.object({
  state: v.picklist(TWITCH_SIGN_IN_STATES),
  /** The Twitch account signed in. */
  login: v.optional(v.string()),
  userCode: v.optional(v.string()),
  verificationUri: v.optional(v.string()),
  expiresAt: v.optional(v.string()),
  /** Why the last sign-in failed, or why none can start (e.g. no client id). */
  error: v.optional(v.string()),
  /** Signed in, but the sign-in must be made again for something (chat sending), in words. */
  renew: v.optional(v.string()),
});
export type TwitchSignIn = v.InferOutput<typeof TwitchSignIn>;

/**
 * Kick linked at the Gatekeeper, as the dashboard drives it on `/api/sources/kick/connect`: `GET` this,
 * `POST` → `KickConnectStart` (the page to open on Kick), `DELETE` unlinks. The same link as
 * `overlay-daemon connect kick`; `events` says in words how the daemon's feed of Kick's events stands.
 */
export const KickLinkState = v.object({
  connected: v.boolean(),
  /** The Kick channel linked (its slug, as in kick.com/<slug>). */
  channel: v.optional(v.string()),
  /** Whether the daemon's socket for Kick's events is open now. */
  eventsConnected: v.boolean(),
  events: v.string(),
});
export type KickLinkState = v.InferOutput<typeof KickLinkState>;
export const KickConnectStart = v.object({ url: v.pipe(v.string(), v.url()) });
export type KickConnectStart = v.InferOutput<typeof KickConnectStart>;

/** The OBS connection of `obs` actions: `off` until an action needs it. */
export const OBS_STATES = ['connected', 'connecting', 'disconnected', 'off'] as const;
/**
 * `off` is "not connected because nothing needs it": no rule has an OBS action (the connection starts
 * with the first one). `detail` says so in words.
 */
export const ObsStatus = v.object({
  state: v.picklist(OBS_STATES),
  lastError: v.optional(v.string()),
  detail: v.optional(v.string()),
});
export type ObsStatus = v.InferOutput<typeof ObsStatus>;

/**
 * The TikFinity event feed (settings.json `tikfinityFeed`), present while it is enabled: `listening` on
 * its port, or `refused` with the reason in words (the port is in use).
 */
export const TIKFINITY_FEED_STATES = ['listening', 'refused'] as const;
export const TikfinityFeedStatus = v.object({
  state: v.picklist(TIKFINITY_FEED_STATES),
  port: v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(65535)),
  /** Sockets open now. */
  clients: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  detail: v.optional(v.string()),
});
export type TikfinityFeedStatus = v.InferOutput<typeof TikfinityFeedStatus>;

/** The parts of `GET /status` beyond `{running, port}`; each present while its part of the daemon runs. */
export const StatusParts = v.object({
  obs: v.optional(ObsStatus),
  licence: v.optional(LicenceStatus),
  tunnel: v.optional(ConnectorStatus),
  tiktok: v.optional(SourceStatus),
  sources: v.optional(v.array(SourceReport)),
  /** One entry per public overlay (docs/relay.md). */
  relay: v.optional(v.array(RelayStatus)),
  tikfinityFeed: v.optional(TikfinityFeedStatus),
});
export type StatusParts = v.InferOutput<typeof StatusParts>;

/**
 * `GET /status` (interface §2.5): `{running, port}` for everyone; a local control client also gets the
 * parts (decisions §3: through the tunnel they stay private).
 */
export const DaemonStatus = v.object({
  running: v.literal(true),
  port: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  ...StatusParts.entries,
});
export type DaemonStatus = v.InferOutput<typeof DaemonStatus>;

/** One outcome in `GET /api/actions/log`, newest last. */
export const ActionLogEntry = v.object({
  /** ISO time the action finished. */
  at: v.string(),
  ruleId: v.string(),
  /** The rule's name, or its id when it has none: what the Actions log shows. */
  ruleName: v.optional(v.string()),
  /** Its index in the rule's actions. */
  action: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  kind: v.picklist(['overlay', 'webhook', 'streamerbot', 'obs', 'speak', 'chat']),
  ok: v.boolean(),
  /** How long it took, waits excluded. */
  ms: v.pipe(v.number(), v.minValue(0)),
  error: v.optional(v.string()),
  /** Why an action that could not run was skipped (decisions-3 §12), with `ok: true`: not a failure. */
  skipped: v.optional(v.string()),
});
export type ActionLogEntry = v.InferOutput<typeof ActionLogEntry>;
export const ActionLog = v.array(ActionLogEntry);

/** One queue in `GET /api/actions/queues` and the answer of skip/clear. */
export const QueueState = v.object({
  name: v.string(),
  running: v.boolean(),
  waiting: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
});
export type QueueState = v.InferOutput<typeof QueueState>;
export const QueueList = v.array(QueueState);

/** `GET /api/tts/voices`: the speech engine of this machine (null: none found) and its voices. */
export const VoiceList = v.object({
  engine: v.nullable(v.string()),
  voices: v.array(v.object({ id: v.string(), name: v.string(), language: v.string() })),
});
export type VoiceList = v.InferOutput<typeof VoiceList>;

/** `POST /api/tts/sample`: speaks a sample with the speech settings, for the dashboard to play. */
export const SpeechSampleInput = v.object({
  text: v.optional(
    v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(300)),
    'This is how your overlay speaks.',
  ),
  voice: v.optional(VoiceId),
  rate: v.optional(v.pipe(v.number(), v.minValue(0.5), v.maxValue(2))),
});
export const SpeechSample = v.object({ sound: TtsSound });
export type SpeechSample = v.InferOutput<typeof SpeechSample>;

/**
 * What a `chat` action of a rule test would send: the text after cutting to the platform's limit, and
 * why it would be skipped on a real event, if it would. `platform` is absent when none could be chosen.
 */
export const ChatPreview = v.object({
  /** Its index in the rule's actions. */
  action: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  platform: v.optional(v.picklist(CHAT_PLATFORMS)),
  text: v.optional(v.string()),
  skipped: v.optional(v.string()),
});
export type ChatPreview = v.InferOutput<typeof ChatPreview>;

/**
 * `POST /api/rules/test` → 200: the sample event the rule's actions ran for, the outcome of each that
 * finished within the wait (in the order they finished), and how many were still waiting or running.
 */
export const RuleTestResult = v.object({
  event: StreamEvent,
  outcomes: ActionLog,
  unfinished: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  /** What each `chat` action would send (a test sends none), one entry per platform it would write on. */
  chat: v.optional(v.array(ChatPreview)),
});
export type RuleTestResult = v.InferOutput<typeof RuleTestResult>;

/** `POST /api/obs/test`: one connection attempt with the settings in force. */
export const ObsTestResult = v.union([
  v.object({ ok: v.literal(true), obsVersion: v.string(), websocketVersion: v.string() }),
  v.object({ ok: v.literal(false), error: v.string() }),
]);
export type ObsTestResult = v.InferOutput<typeof ObsTestResult>;

const count = v.pipe(v.number(), v.safeInteger(), v.minValue(0));

/** One journaled event in `GET /api/events`. */
export const JournaledEvent = v.object({
  seq: count,
  at: v.string(),
  source: v.string(),
  session: count,
  /** Sent from the test panel or the `event` command: counted in no total or leaderboard. */
  test: v.optional(v.boolean(), false),
  /** It reached the daemon more than 5 minutes after it happened (`at`): counted, but it fired no rule. */
  caughtUp: v.optional(v.literal(true)),
  /** When a caught-up event arrived. */
  arrivedAt: v.optional(v.string()),
  event: StreamEvent,
});
/** `GET /api/events?after=&limit=&type=` → a page of the journal, oldest first; `next` asks for more. */
export const EventPage = v.object({ events: v.array(JournaledEvent), next: v.nullable(count) });
export type EventPage = v.InferOutput<typeof EventPage>;
/**
 * `GET /api/events/caught-up` → the caught-up events that arrived in the last 24 hours ("while you were
 * away"), newest first, at most 200.
 */
export const CaughtUpEvents = v.object({ events: v.array(JournaledEvent) });
export type CaughtUpEvents = v.InferOutput<typeof CaughtUpEvents>;

export const ViewerFigures = v.object({
  uniqueId: v.string(),
  nickname: v.string(),
  diamonds: count,
  likes: count,
  chats: count,
  points: v.number(),
  /** The platform whose unit `diamonds` are in (bits, a currency's cents, diamonds); `mixed`: the figure alone. */
  platform: v.optional(v.union([PlatformSchema, v.literal('mixed')])),
  /** The currency of YouTube gifts in `diamonds` (cents), when every one said the same. */
  currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/))),
});
export type ViewerFigures = v.InferOutput<typeof ViewerFigures>;

/** One stream session of `GET /api/sessions`, newest first. */
export const SessionSummary = v.object({
  id: count,
  startedAt: v.string(),
  endedAt: v.nullable(v.string()),
  totals: v.object({
    gifts: count,
    diamonds: count,
    likes: count,
    follows: count,
    shares: count,
    subscribes: count,
    chats: count,
    peakViewers: count,
  }),
  topGifters: v.array(ViewerFigures),
  /** Test events in the session: kept and marked, counted in no total (`DELETE /api/test-events`). */
  testEvents: v.optional(count, 0),
});
export const SessionList = v.array(SessionSummary);
export type SessionSummary = v.InferOutput<typeof SessionSummary>;

export const LEADERBOARD_METRICS = ['diamonds', 'likes', 'chats', 'points'] as const;
/** `GET /api/leaderboard?scope=session|all&metric=…` → the top viewers. */
export const Leaderboard = v.array(ViewerFigures);

/** `GET /api/sessions/:id/minutes`: a session's figures per minute, for its chart. */
export const SessionMinutes = v.array(
  v.object({ minute: v.string(), gifts: count, diamonds: count, likes: count, chats: count }),
);
export type SessionMinutes = v.InferOutput<typeof SessionMinutes>;

/** `DELETE /api/test-events` → how many test events the journal removed. */
export const TestEventsRemoved = v.object({ removed: count });
export type TestEventsRemoved = v.InferOutput<typeof TestEventsRemoved>;
