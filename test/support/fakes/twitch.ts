// A local stand-in for the Twitch services that need a sign-in, speaking their real protocols on one
// loopback HTTP server: the sign-in service (`/oauth2/device`, `/oauth2/token` with the device code and
// refresh grants, `/oauth2/validate`, `/oauth2/revoke`, errors as `{status, message}`), Helix under
// `/helix` (users, streams, eventsub/subscriptions, chat/messages; Client-Id and Bearer checked, answers as
// `{data: […]}` with Ratelimit-* headers), and the EventSub WebSocket at `/ws` (session_welcome, keepalives,
// notifications, session_reconnect with subscriptions moved to the new session, revocation, close codes
// 4001/4003/4004/4007). It records what clients did for the tests' assertions.

import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import type { TwitchTokens } from '../../../daemon/src/sources/twitch/auth.js';
import { readBody, sendJson } from './listen.js';
import type { FakeTwitchIrc } from './twitch-irc.js';

export interface FakeTwitchUser {
  id: string;
  login: string;
  displayName: string;
}

export interface FakeTwitchOptions {
  /** The client id the sign-in service knows (default `fake-client-id`). */
  clientId?: string;
  /** Who signs in (default the broadcaster `streamer`, id `1001`). */
  user?: FakeTwitchUser;
  /** Other users `/helix/users` knows. */
  users?: FakeTwitchUser[];
  /** The session's keepalive_timeout_seconds (default 10, as Twitch's). */
  keepaliveSeconds?: number;
  /** The device flow's polling interval (default 5 s, as Twitch's). */
  pollIntervalS?: number;
  /** How long an access token lives (default 4 h). */
  tokenLifetimeS?: number;
  /** Chat sent through `POST /helix/chat/messages` appears there, as Twitch's chat shows it to everyone. */
  chat?: Pick<FakeTwitchIrc, 'privmsg'>;
}

/** A message `POST /helix/chat/messages` took (sent, or dropped with a reason). */
export interface FakeChatMessage {
  broadcasterId: string;
  senderId: string;
  message: string;
  /** Empty when dropped. */
  messageId: string;
  isSent: boolean;
}

export interface FakeToken {
  accessToken: string;
  refreshToken: string;
  scopes: string[];
  clientId: string;
  userId: string;
  login: string;
  expiresAt: number;
  /** Revoked, forgotten, or its refresh token already used (a public client's is single-use). */
  revoked: boolean;
  refreshUsed: boolean;
}

export interface FakeSubscription {
  id: string;
  type: string;
  version: string;
  condition: Record<string, string>;
  /** The session it delivers to (moved by a reconnect). */
  sessionId: string;
  /** `enabled`, `websocket_disconnected`, `authorization_revoked`, `user_removed`, … */
  status: string;
  createdAt: string;
}

export interface FakeRequest {
  method: string;
  /** Path without the query. */
  path: string;
  query: URLSearchParams;
  clientId?: string;
  authorization?: string;
  /** The form fields or the JSON body. */
  body?: unknown;
}

export interface FakeSessionInfo {
  id: string;
  welcomed: boolean;
  stalled: boolean;
}

export interface FakeTwitch {
  urls: { auth: string; api: string; eventsub: string };
  clientId: string;
  user: FakeTwitchUser;
  /** Every HTTP request, in order. */
  readonly requests: FakeRequest[];
  /** Every subscription ever created, with its current status. */
  readonly subscriptions: FakeSubscription[];
  readonly issuedTokens: FakeToken[];
  /** Tokens revoked through `/oauth2/revoke`. */
  readonly revokedTokens: string[];
  /** Every message `POST /helix/chat/messages` answered 200 to, in order. */
  readonly chatMessages: FakeChatMessage[];
  /** Sessions with an open socket. */
  readonly sessions: FakeSessionInfo[];
  /** Sockets open now. */
  readonly clients: number;
  /** Approves every device code waiting (optionally granting other scopes than those asked for). */
  approve(options?: { scopes?: string[] }): void;
  /** The streamer declines every device code waiting. */
  deny(): void;
  /** The next device-code poll is answered `slow_down`. */
  slowDownNext(): void;
  /** Every device code waiting expires. */
  expireDeviceCodes(): void;
  /** Tokens issued directly, as if a device flow had run (by default with every scope the daemon asks for). */
  issueTokens(scopes?: string[]): FakeToken;
  /** Every access token ends now (refresh tokens still work). */
  expireAccessTokens(): void;
  /** Every token, refresh tokens included, stops working (the user disconnected the app on twitch.tv). */
  forgetAllTokens(): void;
  /** A channel goes live with a viewer count, or offline (`undefined`). */
  setStream(userId: string, viewers: number | undefined): void;
  /** The next Helix request is answered 429, the bucket full again in `resetInS` seconds. */
  limitNext(resetInS: number): void;
  /** The next chat message is answered `is_sent: false` with this `drop_reason`. */
  dropNextChat(code: string, message: string): void;
  /** Users banned from a broadcaster's chat: their messages there are refused (403). */
  banFromChat(broadcasterId: string, userId: string): void;
  /** Enabled subscriptions (of one session). */
  activeSubscriptions(sessionId?: string): FakeSubscription[];
  /** A notification to every live session subscribed to `type`; returns the message ids sent. */
  notify(
    type: string,
    event: Record<string, unknown>,
    options?: { messageId?: string; timestamp?: string },
  ): string[];
  /** session_reconnect to every live session: a new session takes their subscriptions once welcomed. */
  reconnect(): void;
  /** Ends the enabled subscriptions of `type` with a revocation message. */
  revoke(type: string, status?: string): void;
  /** One frame as given to every live socket (malformed messages). */
  sendRaw(text: string): void;
  /** Live sessions go silent (no keepalive, nothing): a dead link that stays open. */
  stall(): void;
  /** Closes every socket with `code`, or cuts them (no close frame) without one. */
  dropConnections(code?: number): void;
  close(): Promise<void>;
}

/** The scope each type needs, as Twitch checks it. */
const REQUIRED_SCOPES: Record<string, string | undefined> = {
  'channel.follow': 'moderator:read:followers',
  'channel.subscribe': 'channel:read:subscriptions',
  'channel.subscription.gift': 'channel:read:subscriptions',
  'channel.subscription.message': 'channel:read:subscriptions',
  'channel.cheer': 'bits:read',
  'channel.raid': undefined,
};
const VERSIONS: Record<string, string> = {
  'channel.follow': '2',
  'channel.subscribe': '1',
  'channel.subscription.gift': '1',
  'channel.subscription.message': '1',
  'channel.cheer': '1',
  'channel.raid': '1',
};

/** RFC 3339 with nanoseconds, as Twitch writes its timestamps. */
function twitchTime(ms = Date.now()): string {
  return new Date(ms)
    .toISOString()
    .replace('Z', `${String(randomBytes(3).readUIntBE(0, 3) % 1_000_000).padStart(6, '0')}Z`);
}

const randomToken = (length: number) =>
  randomBytes(length).toString('base64url').slice(0, length).toLowerCase();

interface Session {
  id: string;
  ws: WebSocket;
  welcomed: boolean;
  stalled: boolean;
  connectedAt: string;
  /** Its subscriptions went to this session after a reconnect. */
  movedTo?: string;
  keepalive?: NodeJS.Timeout;
  unused?: NodeJS.Timeout;
  grace?: NodeJS.Timeout;
}

interface DeviceCode {
  deviceCode: string;
  userCode: string;
  clientId: string;
  scopes: string[];
  state: 'pending' | 'approved' | 'denied' | 'expired' | 'used';
  granted?: string[];
}

/** A full event of each type as Twitch sends it, the broadcaster filled in; `fields` override. */
export function twitchEvent(
  type: string,
  broadcaster: FakeTwitchUser,
  fields: Record<string, unknown> = {},
): Record<string, unknown> {
  const channel = {
    broadcaster_user_id: broadcaster.id,
    broadcaster_user_login: broadcaster.login,
    broadcaster_user_name: broadcaster.displayName,
  };
  const viewer = { user_id: '2002', user_login: 'viewer', user_name: 'Viewer' };
  const base: Record<string, Record<string, unknown>> = {
    'channel.follow': { ...viewer, ...channel, followed_at: twitchTime() },
    'channel.subscribe': { ...viewer, ...channel, tier: '1000', is_gift: false },
    'channel.subscription.message': {
      ...viewer,
      ...channel,
      tier: '2000',
      message: { text: 'Love the stream! FevziGG', emotes: [{ begin: 17, end: 23, id: '302976485' }] },
      cumulative_months: 15,
      streak_months: 1,
      duration_months: 6,
    },
    'channel.subscription.gift': {
      ...viewer,
      ...channel,
      total: 5,
      tier: '1000',
      cumulative_total: 284,
      is_anonymous: false,
    },
    'channel.cheer': { ...viewer, ...channel, is_anonymous: false, message: 'pogchamp cheer100', bits: 100 },
    'channel.raid': {
      from_broadcaster_user_id: '3003',
      from_broadcaster_user_login: 'raider',
      from_broadcaster_user_name: 'Raider',
      to_broadcaster_user_id: broadcaster.id,
      to_broadcaster_user_login: broadcaster.login,
      to_broadcaster_user_name: broadcaster.displayName,
      viewers: 42,
    },
  };
  return { ...(base[type] ?? channel), ...fields };
}

export async function startFakeTwitch(options: FakeTwitchOptions = {}): Promise<FakeTwitch> {
  const clientId = options.clientId ?? 'fake-client-id';
  const user = options.user ?? { id: '1001', login: 'streamer', displayName: 'Streamer' };
  const users = [user, ...(options.users ?? [])];
  const keepaliveSeconds = options.keepaliveSeconds ?? 10;
  const lifetimeS = options.tokenLifetimeS ?? 4 * 3600;

  const requests: FakeRequest[] = [];
  const subscriptions: FakeSubscription[] = [];
  const tokens: FakeToken[] = [];
  const revokedTokens: string[] = [];
  const deviceCodes: DeviceCode[] = [];
  const streams = new Map<string, number>();
  const sessions = new Map<string, Session>();
  /** Reconnect URL token → the session it replaces. */
  const reconnects = new Map<string, Session>();
  let slowDown = false;
  let limited: number | undefined;
  let dropNext: { code: string; message: string } | undefined;
  const chatMessages: FakeChatMessage[] = [];
  /** `broadcasterId:userId` of bans. */
  const bans = new Set<string>();
  let remaining = 800;

  const issue = (scopes: string[]): FakeToken => {
    const token: FakeToken = {
      accessToken: randomToken(30),
      refreshToken: randomToken(50),
      scopes,
      clientId,
      userId: user.id,
      login: user.login,
      expiresAt: Date.now() + lifetimeS * 1000,
      revoked: false,
      refreshUsed: false,
    };
    tokens.push(token);
    return token;
  };
  const liveToken = (access: string | undefined) =>
    tokens.find((t) => t.accessToken === access && !t.revoked && t.expiresAt > Date.now());
  const tokenAnswer = (t: FakeToken) => ({
    access_token: t.accessToken,
    refresh_token: t.refreshToken,
    expires_in: Math.round((t.expiresAt - Date.now()) / 1000),
    scope: t.scopes,
    token_type: 'bearer',
  });

  // ---- the sign-in service ----
  async function oauth(req: IncomingMessage, res: ServerResponse, path: string, fields: URLSearchParams) {
    const fail = (status: number, message: string) => sendJson(res, status, { status, message });
    if (path === '/oauth2/device' && req.method === 'POST') {
      if (fields.get('client_id') !== clientId) return fail(400, 'invalid client');
      const code: DeviceCode = {
        deviceCode: randomToken(40),
        userCode: randomBytes(4).toString('hex').toUpperCase(),
        clientId,
        scopes: (fields.get('scopes') ?? '').split(' ').filter(Boolean),
        state: 'pending',
      };
      deviceCodes.push(code);
      return sendJson(res, 200, {
        device_code: code.deviceCode,
        expires_in: 1800,
        interval: options.pollIntervalS ?? 5,
        user_code: code.userCode,
        verification_uri: `${origin}/activate?public=true&device-code=${code.userCode}`,
      });
    }
    if (path === '/oauth2/token' && req.method === 'POST') {
      const grant = fields.get('grant_type');
      if (fields.get('client_id') !== clientId) return fail(400, 'invalid client');
      if (grant === 'urn:ietf:params:oauth:grant-type:device_code') {
        const code = deviceCodes.find((c) => c.deviceCode === fields.get('device_code'));
        if (!code || code.state === 'used' || code.state === 'expired')
          return fail(400, 'invalid device code');
        if (slowDown) {
          slowDown = false;
          return fail(400, 'slow_down');
        }
        if (code.state === 'pending') return fail(400, 'authorization_pending');
        if (code.state === 'denied') return fail(400, 'access_denied');
        code.state = 'used';
        return sendJson(res, 200, tokenAnswer(issue(code.granted ?? code.scopes)));
      }
      if (grant === 'refresh_token') {
        const old = tokens.find((t) => t.refreshToken === fields.get('refresh_token'));
        if (!old || old.revoked || old.refreshUsed) return fail(400, 'Invalid refresh token');
        old.refreshUsed = true;
        return sendJson(res, 200, tokenAnswer(issue(old.scopes)));
      }
      return fail(400, 'unsupported grant type');
    }
    if (path === '/oauth2/validate' && req.method === 'GET') {
      const token = liveToken(/^OAuth (.+)$/i.exec(req.headers.authorization ?? '')?.[1]);
      if (!token) return fail(401, 'invalid access token');
      return sendJson(res, 200, {
        client_id: token.clientId,
        login: token.login,
        scopes: token.scopes,
        user_id: token.userId,
        expires_in: Math.round((token.expiresAt - Date.now()) / 1000),
      });
    }
    if (path === '/oauth2/revoke' && req.method === 'POST') {
      const token = tokens.find((t) => t.accessToken === fields.get('token') && !t.revoked);
      if (!token || fields.get('client_id') !== token.clientId) return fail(400, 'Invalid token');
      token.revoked = true;
      revokedTokens.push(token.accessToken);
      res.writeHead(200).end();
      return;
    }
    return fail(404, 'Not Found');
  }

  // ---- Helix ----
  function helix(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: URLSearchParams,
    body: unknown,
  ) {
    const nowS = Math.ceil(Date.now() / 1000);
    const headers = (left: number, resetS: number) => ({
      'Ratelimit-Limit': '800',
      'Ratelimit-Remaining': String(left),
      'Ratelimit-Reset': String(resetS),
    });
    const fail = (status: number, error: string, message: string, extra = headers(remaining, nowS + 60)) =>
      sendJson(res, status, { error, status, message }, extra);
    if (limited !== undefined) {
      const resetS = nowS + limited;
      limited = undefined;
      return fail(429, 'Too Many Requests', '', headers(0, resetS));
    }
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const token = liveToken(bearer);
    if (!token) return fail(401, 'Unauthorized', 'Invalid OAuth token');
    if (req.headers['client-id'] !== token.clientId)
      return fail(401, 'Unauthorized', 'Client ID and OAuth token do not match');
    remaining = Math.max(0, remaining - 1);
    const ok = (status: number, data: unknown) => sendJson(res, status, data, headers(remaining, nowS + 60));

    if (path === '/helix/users' && req.method === 'GET') {
      const logins = query.getAll('login').map((l) => l.toLowerCase());
      const ids = query.getAll('id');
      const found =
        logins.length + ids.length === 0
          ? users.filter((u) => u.id === token.userId)
          : users.filter((u) => logins.includes(u.login) || ids.includes(u.id));
      return ok(200, {
        data: found.map((u) => ({
          id: u.id,
          login: u.login,
          display_name: u.displayName,
          type: '',
          broadcaster_type: 'affiliate',
          description: '',
          profile_image_url: `https://static-cdn.jtvnw.net/jtv_user_pictures/${u.login}-profile_image-300x300.png`,
          offline_image_url: '',
          view_count: 0,
          created_at: '2016-12-14T20:32:28Z',
        })),
      });
    }
    if (path === '/helix/streams' && req.method === 'GET') {
      const ids = query.getAll('user_id');
      const live = users.filter((u) => ids.includes(u.id) && streams.has(u.id));
      return ok(200, {
        data: live.map((u) => ({
          id: '40952121085',
          user_id: u.id,
          user_login: u.login,
          user_name: u.displayName,
          game_id: '509658',
          game_name: 'Just Chatting',
          type: 'live',
          title: 'Hello',
          tags: [],
          viewer_count: streams.get(u.id),
          started_at: '2024-01-01T10:00:00Z',
          language: 'en',
          thumbnail_url: '',
          tag_ids: [],
          is_mature: false,
        })),
        pagination: {},
      });
    }
    if (path === '/helix/eventsub/subscriptions' && req.method === 'POST') {
      const request = (body ?? {}) as {
        type?: string;
        version?: string;
        condition?: Record<string, string>;
        transport?: { method?: string; session_id?: string };
      };
      const { type = '', version = '', condition = {}, transport = {} } = request;
      if (VERSIONS[type] !== version)
        return fail(
          400,
          'Bad Request',
          'The combination of values in the type and version fields is not valid',
        );
      if (transport.method !== 'websocket') return fail(400, 'Bad Request', 'only websocket transports here');
      const session = sessions.get(transport.session_id ?? '');
      if (!session?.welcomed || session.movedTo || session.ws.readyState !== WebSocket.OPEN)
        return fail(
          400,
          'Bad Request',
          'websocket transport session does not exist or has already disconnected',
        );
      const needed = type === 'channel.raid' ? ['to_broadcaster_user_id'] : ['broadcaster_user_id'];
      if (type === 'channel.follow') needed.push('moderator_user_id');
      for (const field of needed)
        if (!condition[field]) return fail(400, 'Bad Request', `missing required condition field: ${field}`);
      const scope = REQUIRED_SCOPES[type];
      const actingFor =
        type === 'channel.follow' ? condition.moderator_user_id : condition.broadcaster_user_id;
      if (scope && (!token.scopes.includes(scope) || actingFor !== token.userId))
        return fail(403, 'Forbidden', 'subscription missing proper authorization');
      const same = subscriptions.find(
        (s) =>
          s.status === 'enabled' &&
          s.type === type &&
          s.version === version &&
          s.sessionId === session.id &&
          JSON.stringify(s.condition) === JSON.stringify(condition),
      );
      if (same) return fail(409, 'Conflict', 'subscription already exists');
      const created: FakeSubscription = {
        id: randomUUID(),
        type,
        version,
        condition,
        sessionId: session.id,
        status: 'enabled',
        createdAt: twitchTime(),
      };
      subscriptions.push(created);
      if (session.unused) clearTimeout(session.unused);
      return ok(202, {
        data: [subscriptionJson(created, session.connectedAt)],
        total: subscriptions.filter((s) => s.status === 'enabled').length,
        total_cost: 0,
        max_total_cost: 10,
      });
    }
    if (path === '/helix/chat/messages' && req.method === 'POST') {
      // As Twitch's reference for Send Chat Message answers.
      const request = (body ?? {}) as { broadcaster_id?: unknown; sender_id?: unknown; message?: unknown };
      const { broadcaster_id: broadcasterId, sender_id: senderId, message } = request;
      if (typeof broadcasterId !== 'string' || broadcasterId === '')
        return fail(400, 'Bad Request', 'Missing required parameter "broadcaster_id"');
      if (typeof senderId !== 'string' || senderId === '')
        return fail(400, 'Bad Request', 'Missing required parameter "sender_id"');
      if (typeof message !== 'string' || message === '')
        return fail(400, 'Bad Request', 'Missing required parameter "message"');
      if (!token.scopes.includes('user:write:chat'))
        return fail(401, 'Unauthorized', 'Missing scope: user:write:chat');
      if (senderId !== token.userId)
        return fail(
          401,
          'Unauthorized',
          'The sender_id in the body must match the user ID in the access token',
        );
      const broadcaster = users.find((u) => u.id === broadcasterId);
      if (!broadcaster) return fail(400, 'Bad Request', 'The broadcaster_id is not valid');
      if (bans.has(`${broadcasterId}:${senderId}`))
        return fail(
          403,
          'Forbidden',
          "The sender is not permitted to send chat messages to the broadcaster's chat room",
        );
      if ([...message].length > 500) return fail(422, 'Unprocessable Entity', 'The message is too large');
      const dropped = dropNext;
      dropNext = undefined;
      const sent: FakeChatMessage = {
        broadcasterId,
        senderId,
        message,
        messageId: dropped ? '' : randomUUID(),
        isSent: !dropped,
      };
      chatMessages.push(sent);
      if (!dropped && options.chat) {
        const sender = users.find((u) => u.id === senderId) ?? user;
        options.chat.privmsg(
          broadcaster.login,
          { login: sender.login, displayName: sender.displayName, userId: sender.id },
          message,
          { id: sent.messageId },
        );
      }
      return ok(200, {
        data: [
          { message_id: sent.messageId, is_sent: sent.isSent, ...(dropped ? { drop_reason: dropped } : {}) },
        ],
      });
    }
    return fail(404, 'Not Found', `no route ${req.method} ${path}`);
  }

  function subscriptionJson(s: FakeSubscription, connectedAt?: string) {
    return {
      id: s.id,
      status: s.status,
      type: s.type,
      version: s.version,
      condition: s.condition,
      created_at: s.createdAt,
      transport: {
        method: 'websocket',
        session_id: s.sessionId,
        ...(connectedAt ? { connected_at: connectedAt } : {}),
      },
      cost: 0,
    };
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const text = await readBody(req);
      const json = (req.headers['content-type'] ?? '').includes('application/json');
      let body: unknown;
      try {
        body = json ? JSON.parse(text) : text ? Object.fromEntries(new URLSearchParams(text)) : undefined;
      } catch {
        body = undefined;
      }
      requests.push({
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        ...(typeof req.headers['client-id'] === 'string' ? { clientId: req.headers['client-id'] } : {}),
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
        ...(body === undefined ? {} : { body }),
      });
      if (url.pathname.startsWith('/oauth2/')) {
        // Twitch takes the fields in the query string or the form body.
        const fields = new URLSearchParams(url.searchParams);
        if (!json) for (const [k, v] of new URLSearchParams(text)) fields.set(k, v);
        return oauth(req, res, url.pathname, fields);
      }
      if (url.pathname.startsWith('/helix/')) {
        if (json && body === undefined)
          return sendJson(res, 400, { error: 'Bad Request', status: 400, message: 'invalid JSON' });
        return helix(req, res, url.pathname, url.searchParams, body);
      }
      sendJson(res, 404, { status: 404, message: 'Not Found' });
    })().catch((err) => {
      console.error('[fake twitch] handler failed:', err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });

  // ---- EventSub WebSocket ----
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onSocket(ws, url.searchParams.get('reconnect')));
  });

  function send(session: Session, message: unknown): void {
    if (session.stalled || session.ws.readyState !== WebSocket.OPEN) return;
    session.ws.send(JSON.stringify(message));
    armKeepalive(session);
  }

  /** Twitch sends a keepalive when nothing else was sent for keepalive_timeout_seconds. */
  function armKeepalive(session: Session): void {
    if (session.keepalive) clearTimeout(session.keepalive);
    session.keepalive = undefined;
    if (session.stalled || session.movedTo) return;
    session.keepalive = setTimeout(
      () => send(session, { metadata: metadata('session_keepalive'), payload: {} }),
      keepaliveSeconds * 1000,
    );
  }

  function metadata(type: string, extra: Record<string, string> = {}, timestamp?: string) {
    return {
      message_id: randomUUID(),
      message_type: type,
      message_timestamp: timestamp ?? twitchTime(),
      ...extra,
    };
  }

  function onSocket(ws: WebSocket, reconnectToken: string | null): void {
    const replaced = reconnectToken === null ? undefined : reconnects.get(reconnectToken);
    if (reconnectToken !== null) {
      if (!replaced) {
        ws.close(4007, 'invalid reconnect');
        return;
      }
      reconnects.delete(reconnectToken);
    }
    const session: Session = {
      id: randomBytes(16).toString('base64url'),
      ws,
      welcomed: false,
      stalled: false,
      connectedAt: twitchTime(),
    };
    sessions.set(session.id, session);
    // Clients must not send anything (EventSub WebSocket reference, close code 4001).
    ws.on('message', () => ws.close(4001, 'client sent inbound traffic'));
    ws.on('close', () => {
      for (const timer of [session.keepalive, session.unused, session.grace]) if (timer) clearTimeout(timer);
      sessions.delete(session.id);
      if (session.movedTo) return;
      for (const s of subscriptions)
        if (s.sessionId === session.id && s.status === 'enabled') s.status = 'websocket_disconnected';
    });
    send(session, {
      metadata: metadata('session_welcome'),
      payload: {
        session: {
          id: session.id,
          status: 'connected',
          connected_at: session.connectedAt,
          keepalive_timeout_seconds: keepaliveSeconds,
          reconnect_url: null,
          recovery_url: null,
        },
      },
    });
    session.welcomed = true;
    if (replaced) {
      // The subscriptions move to the new session; the old one is left for the client to close.
      for (const s of subscriptions)
        if (s.sessionId === replaced.id && s.status === 'enabled') s.sessionId = session.id;
      replaced.movedTo = session.id;
      armKeepalive(replaced);
      return;
    }
    // A session with nothing subscribed within the keepalive window is closed (4003).
    session.unused = setTimeout(() => {
      if (
        !subscriptions.some((s) => s.sessionId === session.id && s.status === 'enabled') &&
        !session.stalled
      )
        ws.close(4003, 'connection unused');
    }, keepaliveSeconds * 1000);
  }

  const live = () =>
    [...sessions.values()].filter((s) => s.welcomed && !s.movedTo && s.ws.readyState === WebSocket.OPEN);

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const eventsubUrl = `ws://127.0.0.1:${port}/ws`;

  return {
    urls: { auth: origin, api: `${origin}/helix`, eventsub: eventsubUrl },
    clientId,
    user,
    requests,
    subscriptions,
    issuedTokens: tokens,
    revokedTokens,
    chatMessages,
    get sessions() {
      return [...sessions.values()].map((s) => ({ id: s.id, welcomed: s.welcomed, stalled: s.stalled }));
    },
    get clients() {
      return wss.clients.size;
    },
    approve(approval = {}) {
      for (const code of deviceCodes)
        if (code.state === 'pending') {
          code.state = 'approved';
          if (approval.scopes) code.granted = approval.scopes;
        }
    },
    deny() {
      for (const code of deviceCodes) if (code.state === 'pending') code.state = 'denied';
    },
    slowDownNext() {
      slowDown = true;
    },
    expireDeviceCodes() {
      for (const code of deviceCodes) if (code.state === 'pending') code.state = 'expired';
    },
    issueTokens: (
      scopes = [...Object.values(REQUIRED_SCOPES).filter((s): s is string => !!s), 'user:write:chat'],
    ) => issue([...new Set(scopes)]),
    expireAccessTokens() {
      for (const t of tokens) t.expiresAt = Math.min(t.expiresAt, Date.now() - 1);
    },
    forgetAllTokens() {
      for (const t of tokens) t.revoked = true;
    },
    setStream(userId, viewers) {
      if (viewers === undefined) streams.delete(userId);
      else streams.set(userId, viewers);
    },
    limitNext(resetInS) {
      limited = resetInS;
    },
    dropNextChat(code, message) {
      dropNext = { code, message };
    },
    banFromChat(broadcasterId, userId) {
      bans.add(`${broadcasterId}:${userId}`);
    },
    activeSubscriptions: (sessionId) =>
      subscriptions.filter(
        (s) => s.status === 'enabled' && (sessionId === undefined || s.sessionId === sessionId),
      ),
    notify(type, event, notifyOptions = {}) {
      const sent: string[] = [];
      for (const s of subscriptions) {
        const session = sessions.get(s.sessionId);
        if (s.type !== type || s.status !== 'enabled' || !session) continue;
        const meta = {
          ...metadata(
            'notification',
            { subscription_type: s.type, subscription_version: s.version },
            notifyOptions.timestamp,
          ),
          ...(notifyOptions.messageId ? { message_id: notifyOptions.messageId } : {}),
        };
        send(session, { metadata: meta, payload: { subscription: subscriptionJson(s), event } });
        sent.push(meta.message_id);
      }
      return sent;
    },
    reconnect() {
      for (const session of live()) {
        const token = randomToken(24);
        reconnects.set(token, session);
        send(session, {
          metadata: metadata('session_reconnect'),
          payload: {
            session: {
              id: session.id,
              status: 'reconnecting',
              keepalive_timeout_seconds: null,
              reconnect_url: `${eventsubUrl}?reconnect=${token}`,
              connected_at: session.connectedAt,
              recovery_url: null,
            },
          },
        });
        // 30 s to connect to the new address and close this one (close code 4004).
        session.grace = setTimeout(() => session.ws.close(4004, 'reconnect grace time expired'), 30_000);
      }
    },
    revoke(type, status = 'authorization_revoked') {
      for (const s of subscriptions) {
        const session = sessions.get(s.sessionId);
        if (s.type !== type || s.status !== 'enabled') continue;
        s.status = status;
        if (session)
          send(session, {
            metadata: metadata('revocation', { subscription_type: s.type, subscription_version: s.version }),
            payload: { subscription: subscriptionJson(s) },
          });
      }
    },
    sendRaw(text) {
      for (const session of live()) if (!session.stalled) session.ws.send(text);
    },
    stall() {
      for (const session of live()) {
        session.stalled = true;
        armKeepalive(session);
      }
    },
    dropConnections(code) {
      for (const ws of wss.clients) code === undefined ? ws.terminate() : ws.close(code, 'dropped');
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions.values()) if (session.grace) clearTimeout(session.grace);
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** What `connect twitch` leaves in twitch.json after the stand-in issued `token`. */
export function storedTokens(token: FakeToken, fields: Partial<TwitchTokens> = {}): TwitchTokens {
  return {
    accessToken: token.accessToken,
    refreshToken: token.refreshToken,
    expiresAt: new Date(token.expiresAt).toISOString(),
    scopes: token.scopes,
    userId: token.userId,
    login: token.login,
    clientId: token.clientId,
    ...fields,
  };
}
