// A local stand-in for the YouTube Data API v3, speaking its real JSON: `channels?forHandle=`,
// `search?eventType=live`, `videos?part=liveStreamingDetails`, `liveChat/messages` with `nextPageToken`,
// `pollingIntervalMillis` and `offlineAt`, and Google's error envelope (`keyInvalid`, the 403
// `quotaExceeded` of domain `youtube.quota`, `liveChatEnded`). Messages are full liveChatMessage
// resources; every request is recorded (path, query, time) for the tests' assertions.
import { randomUUID } from 'node:crypto';
import { type FakeServer, listenLoopback, sendJson } from './listen.js';

export interface FakeYouTubeRequest {
  path: string;
  query: URLSearchParams;
  at: number;
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
  close(): Promise<void>;
}

interface Message {
  seq: number;
  item: unknown;
}

export async function startFakeYouTube(options: { apiKey?: string } = {}): Promise<FakeYouTube> {
  const apiKey = options.apiKey ?? 'fake-youtube-key';
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

  const server: FakeServer = await listenLoopback((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname.replace(/^\/youtube\/v3\/?/, '');
    requests.push({ path, query: url.searchParams, at: Date.now() });
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

  const author = (name: string) => {
    const channelId = `UC${Buffer.from(name).toString('hex').padEnd(22, '0').slice(0, 22)}`;
    return {
      channelId,
      channelUrl: `http://www.youtube.com/channel/${channelId}`,
      displayName: name,
      profileImageUrl: `https://yt3.ggpht.example/${channelId}.jpg`,
      isVerified: false,
      isChatOwner: false,
      isChatSponsor: false,
      isChatModerator: false,
    };
  };

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
    close: () => server.close(),
  };
}
