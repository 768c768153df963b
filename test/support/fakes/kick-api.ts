// A local stand-in for Kick's OAuth server (id.kick.com), its public API (api.kick.com) and the one page of
// its site the daemon reads (kick.com/api/v2/channels/<slug>), with the real shapes and a test control API
// under /__fake. One server plays all three: point KICK_AUTH_URL, KICK_API_URL and the site URL at it.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { type FakeServer, listenLoopback, readBody, sendJson } from './listen.js';

/** The endpoints a test can make fail for one user (by the user's token, or the user id in the body). */
const FAILING_ENDPOINTS = [
  'token',
  'refresh',
  'revoke',
  'users',
  'channels',
  'subscriptions',
  'chat',
] as const;
type FailingEndpoint = (typeof FAILING_ENDPOINTS)[number];

const UserSetup = v.object({
  username: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
  /** Seconds the access tokens issued to this user last (Kick's are hours; a test may want 1). */
  token_ttl: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 7200),
  /** The site's channel page answers 403 with Cloudflare's challenge for this channel. */
  site_refuses: v.optional(v.boolean(), false),
});
const FailureSetup = v.object({
  endpoint: v.picklist(FAILING_ENDPOINTS),
  /** An HTTP error status, or 0 to drop the connection without an answer. */
  status: v.union([v.literal(0), v.pipe(v.number(), v.integer(), v.minValue(400), v.maxValue(599))]),
  retry_after: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  times: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 1),
});
const SubscriptionRequest = v.object({
  broadcaster_user_id: v.optional(v.pipe(v.number(), v.integer())),
  events: v.pipe(
    v.array(v.object({ name: v.pipe(v.string(), v.minLength(1)), version: v.pipe(v.number(), v.integer()) })),
    v.minLength(1),
  ),
  method: v.literal('webhook'),
});
const ChatRequest = v.object({
  broadcaster_user_id: v.optional(v.pipe(v.number(), v.integer())),
  // 500 characters, counted in Unicode code points.
  content: v.pipe(
    v.string(),
    v.check(
      (text) => [...text].length >= 1 && [...text].length <= 500,
      'content must be 1 to 500 characters',
    ),
  ),
  reply_to_message_id: v.optional(v.string()),
  type: v.picklist(['user', 'bot']),
});

/**
 * Control API (every Workers test file shares one stand-in, so each uses user ids of its own):
 * - `PUT /__fake/users/:id` `{username?, token_ttl?, site_refuses?}` creates or replaces a Kick user (a
 *   number) and their channel: slug = the username in lowercase, chatroom id = id + 1,000,000, channel id =
 *   id + 2,000,000.
 * - `POST /__fake/users/:id/failures` `{endpoint, status, retry_after?, times?}`: the next `times` calls of
 *   that user to `token` (the code exchange), `refresh`, `revoke`, `users`, `channels`, `subscriptions` or
 *   `chat` answer `status` (0: the connection is dropped; 401 on an API endpoint also spends the token).
 * - `POST /__fake/users/:id/expire`: the user's access tokens stop working (401), refresh tokens still do.
 * - `DELETE /__fake/users/:id/subscriptions/:name`: Kick drops the subscription to that event.
 * - `GET /__fake/users/:id` → `{subscriptions: [{id, event, version, broadcaster_user_id}], chat: [{message_id,
 *   content, type, broadcaster_user_id}], revoked: [token], token_requests, refresh_grants,
 *   last_access_token, last_refresh_token}`.
 * - `PUT /__fake/public-key` (a PEM as the body) replaces the key `/public/v1/public-key` serves;
 *   `GET /__fake/public-key` → `{fetches}`, how many times `/public/v1/public-key` was asked for.
 * Authorize: `GET /oauth/authorize?…&fake_user=<id>` approves at once as that user and redirects back with
 * `code` and `state`; `fake_user=deny` redirects with `error=access_denied`; without it, a page is shown,
 * as the real site asks the person to sign in.
 */
export interface FakeKickOptions {
  port?: number;
  clientId?: string;
  clientSecret?: string;
  /** The PEM served at `/public/v1/public-key` (the webhook sender's public key). */
  publicKeyPem?: string;
  /** The same, by the name the webhook sender gives it. */
  webhookPublicKey?: string;
}

export interface FakeKickChannel {
  slug: string;
  /** The broadcaster user id (Kick's user id of the channel's owner). */
  userId: number;
  /** The site's channel id and chatroom id (default: user id + 2,000,000 and + 1,000,000). */
  channelId?: number;
  chatroomId?: number;
  siteRefuses?: boolean;
}

export interface FakeKick extends FakeServer {
  setPublicKey(pem: string): void;
  /**
   * Adds (or replaces) a Kick user and channel from Node code, and makes it the account that
   * `/oauth/authorize` approves as when no `fake_user` is given (a browser that just follows redirects).
   */
  addChannel(channel: FakeKickChannel): void;
  /** The application's event subscriptions to this broadcaster's channel. */
  subscriptions(userId: number): { id: string; name: string; event: string; version: number }[];
  /** The chat messages sent to this broadcaster's channel through the API. */
  chat(userId: number): { message_id: string; content: string; type: string }[];
}

interface FakeUser {
  id: number;
  username: string;
  channelId: number;
  chatroomId: number;
  tokenTtl: number;
  siteRefuses: boolean;
  failures: { endpoint: FailingEndpoint; status: number; retryAfter?: number; times: number }[];
  subscriptions: {
    id: string;
    event: string;
    version: number;
    broadcaster_user_id: number;
    created_at: string;
  }[];
  chat: { message_id: string; content: string; type: string; broadcaster_user_id: number }[];
  revoked: string[];
  counters: { token_requests: number; refresh_grants: number };
  lastAccessToken: string | null;
  lastRefreshToken: string | null;
}

interface Grant {
  userId: number;
  redirectUri: string;
  challenge: string;
  scope: string;
}

const APP_ID = '01JFAKEKICKAPP';
const token = () => randomBytes(24).toString('base64url');
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

export function startFakeKickApi(options: FakeKickOptions = {}): Promise<FakeKick> {
  const clientId = options.clientId ?? 'test-kick-client-id';
  const clientSecret = options.clientSecret ?? 'test-kick-client-secret';
  let publicKeyPem = options.publicKeyPem ?? options.webhookPublicKey ?? '';
  let publicKeyFetches = 0;
  /** Who `/oauth/authorize` approves as without `fake_user` (set by addChannel). */
  let defaultUser: number | undefined;
  const users = new Map<number, FakeUser>();
  const codes = new Map<string, Grant>();
  const accessTokens = new Map<string, { userId: number; expiresAt: number; scope: string }>();
  const refreshTokens = new Map<string, { userId: number; scope: string }>();

  /** Answers an injected failure for this call, if one is waiting. */
  function takeFailure(user: FakeUser | undefined, endpoint: FailingEndpoint, res: ServerResponse): boolean {
    const failure = user?.failures.find((f) => f.endpoint === endpoint && f.times > 0);
    if (!user || !failure) return false;
    failure.times -= 1;
    if (failure.status === 0) {
      res.socket?.destroy();
      return true;
    }
    const headers: Record<string, string> =
      failure.retryAfter === undefined ? {} : { 'Retry-After': String(failure.retryAfter) };
    if (failure.status === 401 && endpoint !== 'token' && endpoint !== 'refresh') {
      for (const [access, grant] of accessTokens) if (grant.userId === user.id) accessTokens.delete(access);
    }
    sendJson(res, failure.status, { message: 'injected failure', data: {} }, headers);
    return true;
  }

  function issueTokens(res: ServerResponse, user: FakeUser, scope: string) {
    const access = token();
    const refresh = token();
    accessTokens.set(access, { userId: user.id, expiresAt: Date.now() + user.tokenTtl * 1000, scope });
    refreshTokens.set(refresh, { userId: user.id, scope });
    user.lastAccessToken = access;
    user.lastRefreshToken = refresh;
    sendJson(res, 200, {
      access_token: access,
      token_type: 'Bearer',
      refresh_token: refresh,
      expires_in: user.tokenTtl,
      scope,
    });
  }

  function authorize(res: ServerResponse, url: URL) {
    const q = url.searchParams;
    const redirect = q.get('redirect_uri');
    const state = q.get('state');
    if (
      q.get('client_id') !== clientId ||
      q.get('response_type') !== 'code' ||
      !redirect ||
      !state ||
      !q.get('scope') ||
      q.get('code_challenge_method') !== 'S256' ||
      !/^[A-Za-z0-9_-]{43}$/.test(q.get('code_challenge') ?? '')
    ) {
      return sendJson(res, 400, { error: 'Invalid request' });
    }
    const who = q.get('fake_user') ?? (defaultUser === undefined ? null : String(defaultUser));
    const back = new URL(redirect);
    if (who === null) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      return res.end('<!doctype html><title>Kick</title><p>Sign in to Kick to allow this application.</p>');
    }
    const user = users.get(Number(who));
    if (who === 'deny' || !user) {
      back.searchParams.set('error', 'access_denied');
    } else {
      const code = token();
      codes.set(code, {
        userId: user.id,
        redirectUri: redirect,
        challenge: q.get('code_challenge') ?? '',
        scope: q.get('scope') ?? '',
      });
      back.searchParams.set('code', code);
    }
    back.searchParams.set('state', state);
    res.writeHead(302, { Location: back.toString() });
    res.end();
  }

  async function tokenEndpoint(req: IncomingMessage, res: ServerResponse) {
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return sendJson(res, 400, { error: 'Invalid request' });
    }
    const form = new URLSearchParams(await readBody(req));
    if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) {
      return sendJson(res, 401, { error: 'invalid_client' });
    }
    const grantType = form.get('grant_type');
    if (grantType === 'authorization_code') {
      const code = form.get('code') ?? '';
      const grant = codes.get(code);
      const user = grant && users.get(grant.userId);
      if (user) user.counters.token_requests += 1;
      if (takeFailure(user, 'token', res)) return;
      codes.delete(code);
      const verifier = form.get('code_verifier') ?? '';
      if (
        !grant ||
        !user ||
        grant.redirectUri !== form.get('redirect_uri') ||
        !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) ||
        s256(verifier) !== grant.challenge
      ) {
        return sendJson(res, 400, { error: 'invalid_grant' });
      }
      return issueTokens(res, user, grant.scope);
    }
    if (grantType === 'refresh_token') {
      const refresh = form.get('refresh_token') ?? '';
      const grant = refreshTokens.get(refresh);
      const user = grant && users.get(grant.userId);
      if (takeFailure(user, 'refresh', res)) return;
      if (!grant || !user) return sendJson(res, 400, { error: 'invalid_grant' });
      user.counters.refresh_grants += 1;
      // Kick rotates refresh tokens: the one used is spent.
      refreshTokens.delete(refresh);
      return issueTokens(res, user, grant.scope);
    }
    return sendJson(res, 400, { error: 'unsupported_grant_type' });
  }

  function revoke(res: ServerResponse, url: URL) {
    const value = url.searchParams.get('token') ?? '';
    const owner = accessTokens.get(value)?.userId ?? refreshTokens.get(value)?.userId;
    const user = owner === undefined ? undefined : users.get(owner);
    if (takeFailure(user, 'revoke', res)) return;
    if (!value) return sendJson(res, 400, { error: 'Invalid request' });
    accessTokens.delete(value);
    refreshTokens.delete(value);
    user?.revoked.push(value);
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('OK');
  }

  /** The user behind a `Bearer` access token, or an answer of 401 (and undefined). */
  function bearer(
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: FailingEndpoint,
  ): FakeUser | undefined {
    const header = req.headers.authorization ?? '';
    const grant = accessTokens.get(header.startsWith('Bearer ') ? header.slice(7) : '');
    const user = grant && grant.expiresAt > Date.now() ? users.get(grant.userId) : undefined;
    if (grant && user && takeFailure(user, endpoint, res)) return undefined;
    if (!user) {
      sendJson(res, 401, { message: 'Unauthorized', data: {} });
      return undefined;
    }
    return user;
  }

  const channelOf = (user: FakeUser) => ({
    banner_picture: '',
    broadcaster_user_id: user.id,
    category: { id: 15, name: 'Just Chatting', thumbnail: '' },
    channel_description: '',
    slug: user.username.toLowerCase(),
    stream: {
      is_live: false,
      is_mature: false,
      key: '',
      language: 'en',
      start_time: '',
      thumbnail: '',
      url: '',
      viewer_count: 0,
    },
    stream_title: '',
  });

  async function api(req: IncomingMessage, res: ServerResponse, url: URL) {
    const path = url.pathname;
    if (path === '/public/v1/public-key' && req.method === 'GET') {
      publicKeyFetches += 1;
      return sendJson(res, 200, { data: { public_key: publicKeyPem }, message: 'OK' });
    }
    if (path === '/public/v1/users' && req.method === 'GET') {
      const user = bearer(req, res, 'users');
      if (!user) return;
      return sendJson(res, 200, {
        data: [{ email: '', name: user.username, profile_picture: '', user_id: user.id }],
        message: 'OK',
      });
    }
    if (path === '/public/v1/channels' && req.method === 'GET') {
      const user = bearer(req, res, 'channels');
      if (!user) return;
      const ids = url.searchParams.getAll('broadcaster_user_id').map(Number);
      const slugs = url.searchParams.getAll('slug');
      const wanted =
        ids.length + slugs.length === 0
          ? [user]
          : [...users.values()].filter((u) => ids.includes(u.id) || slugs.includes(u.username.toLowerCase()));
      return sendJson(res, 200, { data: wanted.map(channelOf), message: 'OK' });
    }
    if (path === '/public/v1/events/subscriptions') {
      const user = bearer(req, res, 'subscriptions');
      if (!user) return;
      if (req.method === 'GET') {
        const data = user.subscriptions.map((s) => ({
          app_id: APP_ID,
          broadcaster_user_id: s.broadcaster_user_id,
          created_at: s.created_at,
          event: s.event,
          id: s.id,
          method: 'webhook',
          updated_at: s.created_at,
          version: s.version,
        }));
        return sendJson(res, 200, { data, message: 'OK' });
      }
      if (req.method === 'POST') {
        const body = parseJsonWith(SubscriptionRequest, await readBody(req));
        if (!body.ok) return sendJson(res, 400, { message: body.error, data: {} });
        const broadcaster = body.value.broadcaster_user_id ?? user.id;
        if (broadcaster !== user.id) return sendJson(res, 403, { message: 'Forbidden', data: {} });
        const data = body.value.events.map(({ name, version }) => {
          const existing = user.subscriptions.find((s) => s.event === name && s.version === version);
          const id = existing?.id ?? randomUUID();
          if (!existing) {
            user.subscriptions.push({
              id,
              event: name,
              version,
              broadcaster_user_id: broadcaster,
              created_at: new Date().toISOString(),
            });
          }
          return { name, subscription_id: id, version };
        });
        return sendJson(res, 200, { data, message: 'OK' });
      }
      if (req.method === 'DELETE') {
        const ids = url.searchParams.getAll('id');
        user.subscriptions = user.subscriptions.filter((s) => !ids.includes(s.id));
        res.writeHead(204);
        return res.end();
      }
    }
    if (path === '/public/v1/chat' && req.method === 'POST') {
      const user = bearer(req, res, 'chat');
      if (!user) return;
      const body = parseJsonWith(ChatRequest, await readBody(req));
      if (!body.ok) return sendJson(res, 400, { message: body.error, data: {} });
      if (body.value.type === 'user' && body.value.broadcaster_user_id === undefined) {
        return sendJson(res, 400, { message: 'broadcaster_user_id is required for type user', data: {} });
      }
      const message = {
        message_id: randomUUID(),
        content: body.value.content,
        type: body.value.type,
        broadcaster_user_id: body.value.broadcaster_user_id ?? user.id,
      };
      user.chat.push(message);
      return sendJson(res, 200, { data: { is_sent: true, message_id: message.message_id }, message: 'OK' });
    }
    return sendJson(res, 404, { message: 'Not Found', data: {} });
  }

  /** kick.com/api/v2/channels/<slug>: the ids the chat socket needs, or Cloudflare's refusal. */
  function sitePage(res: ServerResponse, slug: string) {
    const user = [...users.values()].find((u) => u.username.toLowerCase() === slug.toLowerCase());
    if (user?.siteRefuses) {
      res.writeHead(403, { 'Content-Type': 'text/html; charset=utf-8', 'cf-mitigated': 'challenge' });
      return res.end('<!DOCTYPE html><html><head><title>Just a moment...</title></head><body></body></html>');
    }
    if (!user) return sendJson(res, 404, { message: 'Channel not found' });
    return sendJson(res, 200, {
      id: user.channelId,
      user_id: user.id,
      slug: user.username.toLowerCase(),
      is_banned: false,
      playback_url: '',
      vod_enabled: true,
      subscription_enabled: true,
      followers_count: 0,
      livestream: null,
      chatroom: {
        id: user.chatroomId,
        chatable_type: 'App\\Models\\Channel',
        channel_id: user.channelId,
        chat_mode: 'public',
        slow_mode: false,
        followers_mode: false,
        subscribers_mode: false,
        emotes_mode: false,
        message_interval: 0,
        following_min_duration: 0,
      },
      user: { id: user.id, username: user.username, bio: '', profile_pic: '' },
    });
  }

  function putUser(setup: {
    id: number;
    username: string;
    tokenTtl?: number;
    siteRefuses?: boolean;
    channelId?: number;
    chatroomId?: number;
  }) {
    const before = users.get(setup.id);
    users.set(setup.id, {
      id: setup.id,
      username: setup.username,
      channelId: setup.channelId ?? setup.id + 2_000_000,
      chatroomId: setup.chatroomId ?? setup.id + 1_000_000,
      tokenTtl: setup.tokenTtl ?? 7200,
      siteRefuses: setup.siteRefuses ?? false,
      failures: [],
      subscriptions: before?.subscriptions ?? [],
      chat: before?.chat ?? [],
      revoked: before?.revoked ?? [],
      counters: before?.counters ?? { token_requests: 0, refresh_grants: 0 },
      lastAccessToken: before?.lastAccessToken ?? null,
      lastRefreshToken: before?.lastRefreshToken ?? null,
    });
  }

  async function control(req: IncomingMessage, res: ServerResponse, path: string) {
    if (path === '/__fake/public-key' && req.method === 'PUT') {
      publicKeyPem = await readBody(req);
      res.writeHead(204);
      return res.end();
    }
    if (path === '/__fake/public-key' && req.method === 'GET') {
      return sendJson(res, 200, { fetches: publicKeyFetches });
    }
    const match = /^\/__fake\/users\/([0-9]{1,12})(\/failures|\/expire|\/subscriptions\/[a-z.]+)?$/.exec(
      path,
    );
    if (!match) return sendJson(res, 404, { error: 'no such control route' });
    const id = Number(match[1]);
    const sub = match[2];
    if (!sub && req.method === 'PUT') {
      const setup = parseJsonWith(UserSetup, (await readBody(req)) || '{}');
      if (!setup.ok) return sendJson(res, 400, { error: setup.error });
      putUser({
        id,
        username: setup.value.username ?? `kicker${id}`,
        tokenTtl: setup.value.token_ttl,
        siteRefuses: setup.value.site_refuses,
      });
      res.writeHead(204);
      return res.end();
    }
    const user = users.get(id);
    if (!user) return sendJson(res, 404, { error: 'no such user' });
    if (!sub && req.method === 'GET') {
      return sendJson(res, 200, {
        subscriptions: user.subscriptions,
        chat: user.chat,
        revoked: user.revoked,
        ...user.counters,
        last_access_token: user.lastAccessToken,
        last_refresh_token: user.lastRefreshToken,
      });
    }
    if (sub === '/failures' && req.method === 'POST') {
      const failure = parseJsonWith(FailureSetup, await readBody(req));
      if (!failure.ok) return sendJson(res, 400, { error: failure.error });
      user.failures.push({
        endpoint: failure.value.endpoint,
        status: failure.value.status,
        times: failure.value.times,
        ...(failure.value.retry_after === undefined ? {} : { retryAfter: failure.value.retry_after }),
      });
      res.writeHead(204);
      return res.end();
    }
    if (sub === '/expire' && req.method === 'POST') {
      for (const grant of accessTokens.values()) if (grant.userId === id) grant.expiresAt = 0;
      res.writeHead(204);
      return res.end();
    }
    if (sub?.startsWith('/subscriptions/') && req.method === 'DELETE') {
      const name = sub.slice('/subscriptions/'.length);
      user.subscriptions = user.subscriptions.filter((s) => s.event !== name);
      res.writeHead(204);
      return res.end();
    }
    return sendJson(res, 405, { error: 'method not allowed' });
  }

  return listenLoopback(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const site = /^\/api\/v2\/channels\/([A-Za-z0-9_-]{1,64})$/.exec(url.pathname);
    if (url.pathname.startsWith('/__fake/')) await control(req, res, url.pathname);
    else if (req.method === 'GET' && url.pathname === '/oauth/authorize') authorize(res, url);
    else if (req.method === 'POST' && url.pathname === '/oauth/token') await tokenEndpoint(req, res);
    else if (req.method === 'POST' && url.pathname === '/oauth/revoke') revoke(res, url);
    else if (req.method === 'GET' && site) sitePage(res, site[1] ?? '');
    else if (url.pathname.startsWith('/public/v1/')) await api(req, res, url);
    else sendJson(res, 404, { message: 'Not Found' });
  }, options.port ?? 0).then((server) => ({
    ...server,
    setPublicKey: (pem: string) => {
      publicKeyPem = pem;
    },
    addChannel: (channel: FakeKickChannel) => {
      putUser({
        id: channel.userId,
        username: channel.slug,
        ...(channel.channelId === undefined ? {} : { channelId: channel.channelId }),
        ...(channel.chatroomId === undefined ? {} : { chatroomId: channel.chatroomId }),
        ...(channel.siteRefuses === undefined ? {} : { siteRefuses: channel.siteRefuses }),
      });
      defaultUser = channel.userId;
    },
    subscriptions: (userId: number) =>
      (users.get(userId)?.subscriptions ?? []).map((s) => ({
        id: s.id,
        name: s.event,
        event: s.event,
        version: s.version,
      })),
    chat: (userId: number) => [...(users.get(userId)?.chat ?? [])],
  }));
}
