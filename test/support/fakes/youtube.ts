// A local stand-in for the YouTube Data API v3, speaking its real JSON: `channels?forHandle=`,
// `search?eventType=live`, `videos?part=liveStreamingDetails`, `liveChat/messages` with `nextPageToken`,
// `pollingIntervalMillis` and `offlineAt`, and Google's error envelope (`keyInvalid`, the 403
// `quotaExceeded` of domain `youtube.quota`, `liveChatEnded`). Messages are full liveChatMessage
// resources; every request is recorded (path, query, time) for the tests' assertions.
// Also Google's sign-in service for TVs and limited-input devices (`/device/code`, `/token` with the
// device code or a refresh token, `/revoke`), with the test deciding when the streamer allows, refuses or
// lets the code expire, and `liveChatMessages.insert` (POST liveChat/messages with a Bearer token), whose
// messages come back in the chat the source polls, as YouTube echoes them.
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type FakeServer, listenLoopback, readBody, sendJson } from './listen.js';

export interface FakeYouTubeRequest {
  path: string;
  query: URLSearchParams;
  at: number;
  /** GET unless said; POST for liveChatMessages.insert. */
  method?: string;
}

/** One request to the sign-in service: `device/code`, `token` (with its grant type), `revoke`. */
export interface FakeGoogleAuthRequest {
  path: string;
  form: URLSearchParams;
  at: number;
}

/** A message liveChatMessages.insert took. */
export interface FakeInsertedMessage {
  id: string;
  liveChatId: string;
  text: string;
  accessToken: string;
}

export interface MessageSpec {
  type?: 'textMessageEvent' | 'superChatEvent' | 'superStickerEvent' | 'newSponsorEvent' | string;
  text?: string;
  /** Display name of the author (its channel id is derived from it). */
  author?: string;
  /** Super Chat / Super Sticker amount in micros (5,000,000 = 5.00). */
  amountMicros?: number;
  currency?: string;
  stickerAltText?: string;
  memberLevelName?: string;
  id?: string;
}

export interface FakeYouTube {
  /** `http://127.0.0.1:PORT/youtube/v3`: what OVERLAY_YOUTUBE_API_URL is set to. */
  url: string;
  readonly requests: FakeYouTubeRequest[];
  /** Handles the `channels` method resolves, `@name` → channel id. */
  handles: Map<string, string>;
  /** The channel goes live: a broadcast with a live chat. */
  goLive(
    channelId: string,
    options?: { videoId?: string; concurrentViewers?: number },
  ): { videoId: string; liveChatId: string };
  /** The broadcast ends: chat pages carry `offlineAt`, then the chat answers 403 liveChatEnded. */
  endStream(): void;
  /** Adds a message (a full resource is built from the spec); returns its id. */
  addMessage(spec: MessageSpec): string;
  /** Adds a raw item as given (a malformed message). */
  addRawItem(item: unknown): void;
  /** The next `liveChat/messages` answer repeats the previous page's items too (a page served twice). */
  repeatNextPage(): void;
  setViewers(count: number): void;
  setPollingIntervalMillis(ms: number): void;
  /** Every request answers 403 quotaExceeded while set. */
  setQuotaExceeded(exceeded: boolean): void;
  /** The next request answers this status and reason; `raw` sends a body that is not JSON. */
  failNext(status: number, reason?: string, raw?: string): void;

  /** Google's sign-in service, an origin: what OVERLAY_GOOGLE_AUTH_URL is set to. */
  authUrl: string;
  /** The Google client the sign-in service knows (a "TVs and Limited Input devices" one). */
  readonly googleClient: { clientId: string; clientSecret: string };
  readonly authRequests: FakeGoogleAuthRequest[];
  /** The account that signs in: its channel's id and name. */
  channel: { id: string; title: string };
  /** The streamer allows the sign-in under way: the next poll gets tokens. */
  approve(): void;
  /** The streamer refuses it: the next poll answers access_denied. */
  deny(): void;
  /** The code runs out: the next poll answers expired_token. */
  expireCode(): void;
  /** The next poll answers slow_down (the sign-in stays pending). */
  slowDownNext(): void;
  /** Every access token issued so far stops working (401); refresh tokens still renew them. */
  invalidateAccessTokens(): void;
  /** Every refresh token issued so far is refused (invalid_grant): the sign-in has ended. */
  revokeRefreshTokens(): void;
  /** Issues tokens directly (a sign-in made earlier), for a test's youtube.json. */
  issueTokens(options?: { scope?: string }): { accessToken: string; refreshToken: string; scope: string };
  /** Refresh tokens `/revoke` was given. */
  readonly revoked: string[];
  /** Messages liveChatMessages.insert took, in order. */
  readonly inserted: FakeInsertedMessage[];
  /** The next insert answers this status with Google's envelope (reason, message), and these headers. */
  failNextInsert(status: number, reason: string, headers?: Record<string, string>): void;
  close(): Promise<void>;
}

interface Message {
  seq: number;
  item: unknown;
}

export async function startFakeYouTube(
  options: {
    apiKey?: string;
    /** The device flow's polling interval, seconds (Google's is 5). */
    deviceIntervalS?: number;
    /** How long a device code works, seconds (Google's is 1800). */
    deviceExpiresInS?: number;
  } = {},
): Promise<FakeYouTube> {
  const apiKey = options.apiKey ?? 'fake-youtube-key';
  const googleClient = {
    clientId: 'fake-client.apps.googleusercontent.com',
    clientSecret: 'GOCSPX-fake-secret',
  };
  const authRequests: FakeGoogleAuthRequest[] = [];
  const channel = { id: 'UCstreamer0000000000000a', title: 'Streamer' };
  /** The sign-in under way: its codes and what the streamer did. */
  let device:
    | { deviceCode: string; userCode: string; outcome: 'pending' | 'approved' | 'denied' | 'expired' }
    | undefined;
  let slowDown = false;
  const accessTokens = new Map<string, { scope: string }>();
  const refreshTokens = new Map<string, { scope: string }>();
  const revoked: string[] = [];
  const inserted: FakeInsertedMessage[] = [];
  let insertFailure: { status: number; reason: string; headers?: Record<string, string> } | undefined;
  const SCOPE = 'https://www.googleapis.com/auth/youtube.force-ssl';
  const issue = (scope = SCOPE) => {
    const accessToken = `ya29.${randomBytes(12).toString('hex')}`;
    const refreshToken = `1//${randomBytes(12).toString('hex')}`;
    accessTokens.set(accessToken, { scope });
    refreshTokens.set(refreshToken, { scope });
    return { accessToken, refreshToken, scope };
  };
  const requests: FakeYouTubeRequest[] = [];
  const handles = new Map<string, string>();
  let live:
    | { channelId: string; videoId: string; liveChatId: string; ended: boolean; viewers?: number }
    | undefined;
  const messages: Message[] = [];
  let nextSeq = 1;
  let pollingIntervalMillis = 100;
  let quotaExceeded = false;
  let failure: { status: number; reason?: string; raw?: string } | undefined;
  let repeat = false;

  const error = (
    res: Parameters<typeof sendJson>[0],
    code: number,
    reason: string,
    message: string,
    domain = 'youtube.api',
  ) =>
    sendJson(res, code, {
      error: {
        code,
        message,
        errors: [{ message, domain, reason }],
        status: code === 403 ? 'PERMISSION_DENIED' : 'INVALID_ARGUMENT',
      },
    });

  /** Google's OAuth errors: `{"error": "...", "error_description": "..."}`. */
  const oauthError = (
    res: Parameters<typeof sendJson>[0],
    status: number,
    error: string,
    description: string,
  ) => sendJson(res, status, { error, error_description: description });

  const signIn = async (req: IncomingMessage, res: Parameters<typeof sendJson>[0], path: string) => {
    const form = new URLSearchParams(await readBody(req));
    authRequests.push({ path, form, at: Date.now() });
    if (req.method !== 'POST') return oauthError(res, 405, 'invalid_request', 'Method Not Allowed');
    const clientOk =
      form.get('client_id') === googleClient.clientId &&
      (path === 'device/code' || form.get('client_secret') === googleClient.clientSecret);
    if (path === 'revoke') {
      const token = form.get('token') ?? '';
      if (!refreshTokens.has(token) && !accessTokens.has(token))
        return oauthError(res, 400, 'invalid_token', 'Token expired or revoked');
      revoked.push(token);
      refreshTokens.delete(token);
      accessTokens.clear();
      return sendJson(res, 200, {});
    }
    if (!clientOk) return oauthError(res, 401, 'invalid_client', 'Unauthorized');
    if (path === 'device/code') {
      if (form.get('scope') !== SCOPE)
        return oauthError(res, 400, 'invalid_scope', 'Some requested scopes were invalid.');
      device = {
        deviceCode: `AH-${randomBytes(16).toString('hex')}`,
        userCode: `${randomBytes(2).toString('hex').toUpperCase()}-${randomBytes(2).toString('hex').toUpperCase()}`,
        outcome: 'pending',
      };
      return sendJson(res, 200, {
        device_code: device.deviceCode,
        user_code: device.userCode,
        expires_in: options.deviceExpiresInS ?? 1800,
        interval: options.deviceIntervalS ?? 5,
        verification_url: `${server.url}/device`,
      });
    }
    if (path !== 'token') return oauthError(res, 404, 'invalid_request', 'Not Found');
    const grant = form.get('grant_type');
    if (grant === 'refresh_token') {
      const known = refreshTokens.get(form.get('refresh_token') ?? '');
      if (!known) return oauthError(res, 400, 'invalid_grant', 'Token has been expired or revoked.');
      const accessToken = `ya29.${randomBytes(12).toString('hex')}`;
      accessTokens.set(accessToken, { scope: known.scope });
      return sendJson(res, 200, {
        access_token: accessToken,
        expires_in: 3599,
        scope: known.scope,
        token_type: 'Bearer',
      });
    }
    if (grant !== 'urn:ietf:params:oauth:grant-type:device_code')
      return oauthError(res, 400, 'unsupported_grant_type', `Invalid grant_type: ${grant}`);
    if (!device || form.get('device_code') !== device.deviceCode)
      return oauthError(res, 400, 'invalid_grant', 'Malformed auth code.');
    if (slowDown) {
      slowDown = false;
      return oauthError(res, 403, 'slow_down', 'Forbidden');
    }
    switch (device.outcome) {
      case 'pending':
        return oauthError(res, 428, 'authorization_pending', 'Precondition Required');
      case 'denied':
        return oauthError(res, 403, 'access_denied', 'Forbidden');
      case 'expired':
        return oauthError(res, 400, 'expired_token', 'Bad Request');
      case 'approved': {
        device = undefined;
        const tokens = issue();
        return sendJson(res, 200, {
          access_token: tokens.accessToken,
          expires_in: 3599,
          refresh_token: tokens.refreshToken,
          scope: tokens.scope,
          token_type: 'Bearer',
        });
      }
    }
  };

  /** A request with `Authorization: Bearer`: the signed-in account's channel, or an insert. */
  const signed = async (
    req: IncomingMessage,
    res: Parameters<typeof sendJson>[0],
    path: string,
    url: URL,
  ) => {
    const body = await readBody(req);
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const known = accessTokens.get(token);
    if (!known)
      return sendJson(res, 401, {
        error: {
          code: 401,
          message:
            'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
          errors: [
            {
              message: 'Invalid Credentials',
              domain: 'global',
              reason: 'authError',
              location: 'Authorization',
              locationType: 'header',
            },
          ],
          status: 'UNAUTHENTICATED',
        },
      });
    if (req.method === 'GET' && path === 'channels' && url.searchParams.get('mine') === 'true')
      return sendJson(res, 200, {
        kind: 'youtube#channelListResponse',
        etag: randomUUID(),
        pageInfo: { totalResults: 1, resultsPerPage: 5 },
        items: [
          { kind: 'youtube#channel', etag: randomUUID(), id: channel.id, snippet: { title: channel.title } },
        ],
      });
    if (req.method !== 'POST' || path !== 'liveChat/messages')
      return error(res, 404, 'notFound', `no signed method ${req.method} ${path}`);
    if (insertFailure) {
      const f = insertFailure;
      insertFailure = undefined;
      res.setHeader('Content-Type', 'application/json');
      for (const [name, value] of Object.entries(f.headers ?? {})) res.setHeader(name, value);
      return error(
        res,
        f.status,
        f.reason,
        `failure ${f.reason}`,
        f.reason === 'quotaExceeded' ? 'youtube.quota' : 'youtube.liveChat',
      );
    }
    if (url.searchParams.get('part') !== 'snippet')
      return error(res, 400, 'unexpectedPart', 'The part parameter must be snippet.');
    let snippet:
      | { liveChatId?: unknown; type?: unknown; textMessageDetails?: { messageText?: unknown } }
      | undefined;
    try {
      snippet = (JSON.parse(body) as { snippet?: typeof snippet }).snippet;
    } catch {
      return error(res, 400, 'parseError', 'Parse Error', 'global');
    }
    if (typeof snippet?.liveChatId !== 'string')
      return error(res, 400, 'liveChatIdRequired', 'The liveChatId is required.');
    if (snippet.type !== 'textMessageEvent') return error(res, 400, 'typeRequired', 'The type is required.');
    const text = snippet.textMessageDetails?.messageText;
    if (typeof text !== 'string' || text === '')
      return error(res, 400, 'messageTextRequired', 'The message text is required.');
    if (!live || snippet.liveChatId !== live.liveChatId)
      return error(
        res,
        404,
        'liveChatNotFound',
        'The live chat that you are trying to insert a message in cannot be found.',
      );
    if (live.ended) return error(res, 403, 'liveChatEnded', 'The specified live chat is no longer live.');
    const id = `LCC.${randomUUID()}`;
    inserted.push({ id, liveChatId: live.liveChatId, text, accessToken: token });
    const item = messageItem({
      id,
      text,
      author: channel.title,
      authorChannelId: channel.id,
      isChatOwner: true,
    });
    // YouTube echoes the message in the chat, under the signed-in channel.
    messages.push({ seq: nextSeq++, item });
    return sendJson(res, 200, item);
  };

  const server: FakeServer = await listenLoopback(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (!url.pathname.startsWith('/youtube/v3')) return signIn(req, res, url.pathname.replace(/^\/+/, ''));
    const path = url.pathname.replace(/^\/youtube\/v3\/?/, '');
    requests.push({ path, query: url.searchParams, at: Date.now(), method: req.method ?? 'GET' });
    if (req.headers.authorization?.startsWith('Bearer ')) return signed(req, res, path, url);
    if (url.searchParams.get('key') !== apiKey)
      return error(res, 400, 'keyInvalid', 'API key not valid. Please pass a valid API key.', 'global');
    if (failure) {
      const f = failure;
      failure = undefined;
      if (f.raw !== undefined) {
        res.writeHead(f.status, { 'Content-Type': 'text/html' });
        res.end(f.raw);
        return;
      }
      return error(res, f.status, f.reason ?? 'backendError', `failure ${f.reason ?? f.status}`);
    }
    if (quotaExceeded)
      return error(
        res,
        403,
        'quotaExceeded',
        'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.',
        'youtube.quota',
      );
    switch (path) {
      case 'channels': {
        const handle = url.searchParams.get('forHandle') ?? '';
        const id = handles.get(
          handle.toLowerCase().startsWith('@') ? handle.toLowerCase() : `@${handle.toLowerCase()}`,
        );
        return sendJson(res, 200, {
          kind: 'youtube#channelListResponse',
          etag: randomUUID(),
          pageInfo: { totalResults: id ? 1 : 0, resultsPerPage: 5 },
          ...(id ? { items: [{ kind: 'youtube#channel', etag: randomUUID(), id }] } : {}),
        });
      }
      case 'search': {
        const channelId = url.searchParams.get('channelId');
        const found =
          live && !live.ended && live.channelId === channelId && url.searchParams.get('eventType') === 'live';
        return sendJson(res, 200, {
          kind: 'youtube#searchListResponse',
          etag: randomUUID(),
          regionCode: 'US',
          pageInfo: { totalResults: found ? 1 : 0, resultsPerPage: 1 },
          items:
            found && live
              ? [
                  {
                    kind: 'youtube#searchResult',
                    etag: randomUUID(),
                    id: { kind: 'youtube#video', videoId: live.videoId },
                  },
                ]
              : [],
        });
      }
      case 'videos': {
        const id = url.searchParams.get('id');
        const item =
          live && live.videoId === id
            ? {
                kind: 'youtube#video',
                etag: randomUUID(),
                id: live.videoId,
                liveStreamingDetails: {
                  actualStartTime: new Date(Date.now() - 60_000).toISOString(),
                  ...(live.ended
                    ? { actualEndTime: new Date().toISOString() }
                    : { activeLiveChatId: live.liveChatId }),
                  ...(live.viewers !== undefined && !live.ended
                    ? { concurrentViewers: String(live.viewers) }
                    : {}),
                },
              }
            : undefined;
        return sendJson(res, 200, {
          kind: 'youtube#videoListResponse',
          etag: randomUUID(),
          items: item ? [item] : [],
          pageInfo: { totalResults: item ? 1 : 0, resultsPerPage: 1 },
        });
      }
      case 'liveChat/messages': {
        if (!live || url.searchParams.get('liveChatId') !== live.liveChatId)
          return error(
            res,
            404,
            'liveChatNotFound',
            'The live chat that you are trying to retrieve cannot be found.',
          );
        if (live.ended && url.searchParams.get('pageToken'))
          return error(res, 403, 'liveChatEnded', 'The specified live chat is no longer live.');
        const from = Number(url.searchParams.get('pageToken')?.replace(/^p/, '') ?? '0');
        const start = repeat ? Math.max(0, from - 50) : from;
        repeat = false;
        const page = messages.filter((m) => m.seq > start);
        const last = messages.at(-1)?.seq ?? 0;
        return sendJson(res, 200, {
          kind: 'youtube#liveChatMessageListResponse',
          etag: randomUUID(),
          pollingIntervalMillis,
          pageInfo: { totalResults: page.length, resultsPerPage: page.length },
          nextPageToken: `p${Math.max(last, from)}`,
          ...(live.ended ? { offlineAt: new Date().toISOString() } : {}),
          items: page.map((m) => m.item),
        });
      }
      default:
        return error(res, 404, 'notFound', `no method ${path}`);
    }
  });

  const author = (name: string, id?: string, isChatOwner = false) => {
    const channelId = id ?? `UC${Buffer.from(name).toString('hex').padEnd(22, '0').slice(0, 22)}`;
    return {
      channelId,
      channelUrl: `http://www.youtube.com/channel/${channelId}`,
      displayName: name,
      profileImageUrl: `https://yt3.ggpht.example/${channelId}.jpg`,
      isVerified: false,
      isChatOwner,
      isChatSponsor: false,
      isChatModerator: false,
    };
  };
  /** A text message as YouTube gives it (an inserted one is answered so too). */
  function messageItem(spec: {
    id: string;
    text: string;
    author: string;
    authorChannelId: string;
    isChatOwner: boolean;
  }) {
    const who = author(spec.author, spec.authorChannelId, spec.isChatOwner);
    return {
      kind: 'youtube#liveChatMessage',
      etag: randomUUID(),
      id: spec.id,
      snippet: {
        type: 'textMessageEvent',
        liveChatId: live?.liveChatId,
        authorChannelId: who.channelId,
        publishedAt: new Date().toISOString(),
        hasDisplayContent: true,
        displayMessage: spec.text,
        textMessageDetails: { messageText: spec.text },
      },
      authorDetails: who,
    };
  }

  return {
    url: `${server.url}/youtube/v3`,
    requests,
    handles,
    goLive(channelId, opts = {}) {
      live = {
        channelId,
        videoId: opts.videoId ?? `v${randomUUID().slice(0, 10)}`,
        liveChatId: `Cg0KC${randomUUID().replace(/-/g, '').slice(0, 20)}`,
        ended: false,
        ...(opts.concurrentViewers !== undefined ? { viewers: opts.concurrentViewers } : {}),
      };
      messages.length = 0;
      return { videoId: live.videoId, liveChatId: live.liveChatId };
    },
    endStream() {
      if (live) live.ended = true;
    },
    addMessage(spec) {
      if (!live) throw new Error('not live');
      const id = spec.id ?? `LCC.${randomUUID()}`;
      const type = spec.type ?? 'textMessageEvent';
      const amount = {
        amountMicros: String(spec.amountMicros ?? 5_000_000),
        currency: spec.currency ?? 'USD',
        amountDisplayString: `$${((spec.amountMicros ?? 5_000_000) / 1_000_000).toFixed(2)}`,
        tier: 2,
      };
      const snippet: Record<string, unknown> = {
        type,
        liveChatId: live.liveChatId,
        authorChannelId: author(spec.author ?? 'Viewer').channelId,
        publishedAt: new Date().toISOString(),
        hasDisplayContent: true,
        displayMessage: spec.text ?? '',
      };
      if (type === 'textMessageEvent') snippet.textMessageDetails = { messageText: spec.text ?? '' };
      if (type === 'superChatEvent') snippet.superChatDetails = { ...amount, userComment: spec.text ?? '' };
      if (type === 'superStickerEvent')
        snippet.superStickerDetails = {
          ...amount,
          superStickerMetadata: {
            stickerId: 'sticker-1',
            altText: spec.stickerAltText ?? 'Dancing cat',
            language: 'en',
          },
        };
      if (type === 'newSponsorEvent')
        snippet.newSponsorDetails = { memberLevelName: spec.memberLevelName ?? 'Member', isUpgrade: false };
      messages.push({
        seq: nextSeq++,
        item: {
          kind: 'youtube#liveChatMessage',
          etag: randomUUID(),
          id,
          snippet,
          authorDetails: author(spec.author ?? 'Viewer'),
        },
      });
      return id;
    },
    addRawItem(item) {
      messages.push({ seq: nextSeq++, item });
    },
    repeatNextPage() {
      repeat = true;
    },
    setViewers(count) {
      if (live) live.viewers = count;
    },
    setPollingIntervalMillis(ms) {
      pollingIntervalMillis = ms;
    },
    setQuotaExceeded(exceeded) {
      quotaExceeded = exceeded;
    },
    failNext(status, reason, raw) {
      failure = { status, ...(reason ? { reason } : {}), ...(raw !== undefined ? { raw } : {}) };
    },
    authUrl: server.url,
    googleClient,
    authRequests,
    channel,
    approve() {
      if (device) device.outcome = 'approved';
    },
    deny() {
      if (device) device.outcome = 'denied';
    },
    expireCode() {
      if (device) device.outcome = 'expired';
    },
    slowDownNext() {
      slowDown = true;
    },
    invalidateAccessTokens() {
      accessTokens.clear();
    },
    revokeRefreshTokens() {
      refreshTokens.clear();
    },
    issueTokens(opts = {}) {
      return issue(opts.scope);
    },
    revoked,
    inserted,
    failNextInsert(status, reason, headers) {
      insertFailure = { status, reason, ...(headers ? { headers } : {}) };
    },
    close: () => server.close(),
  };
}
