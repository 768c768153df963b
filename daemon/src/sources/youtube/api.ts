// A small client of the YouTube Data API v3 on `fetch`, one schema per response: the
// channel of a handle, the channel's live broadcast, the broadcast's live chat and viewer count, and the
// chat's messages. The official client needs Node 22; the API is plain JSON over HTTPS. The key rides in
// the query string, as Google documents, and never appears in an error or a log line.
import * as v from 'valibot';
import { errorMessage } from '../../errors.js';

/** What went wrong, as far as what to do next is concerned. */
export type YouTubeErrorKind =
  | 'quota' // the project's daily quota is used up: wait for midnight Pacific time
  | 'rate' // too many requests for now: retry with backoff
  | 'chat-ended' // the live chat is over (or gone): the stream ended
  | 'key' // the API key is missing, wrong or not allowed for the YouTube Data API
  | 'not-found'
  | 'forbidden'
  | 'server' // 5xx: retry with backoff
  | 'network'
  | 'bad-response';

export class YouTubeApiError extends Error {
  constructor(
    readonly kind: YouTubeErrorKind,
    message: string,
    readonly status?: number,
    readonly reason?: string,
  ) {
    super(message);
    this.name = 'YouTubeApiError';
  }
}

/** Google's error envelope: `{error: {code, message, errors: [{reason, domain, message}]}}`. */
const ErrorEnvelope = v.looseObject({
  error: v.looseObject({
    code: v.optional(v.number()),
    message: v.optional(v.string()),
    errors: v.optional(
      v.array(v.looseObject({ reason: v.optional(v.string()), domain: v.optional(v.string()) })),
    ),
    status: v.optional(v.string()),
  }),
});

const ChannelList = v.looseObject({
  items: v.optional(v.array(v.looseObject({ id: v.string() })), []),
});

const SearchList = v.looseObject({
  items: v.optional(
    v.array(
      v.looseObject({ id: v.looseObject({ kind: v.optional(v.string()), videoId: v.optional(v.string()) }) }),
    ),
    [],
  ),
});

const VideoList = v.looseObject({
  items: v.optional(
    v.array(
      v.looseObject({
        id: v.string(),
        liveStreamingDetails: v.optional(
          v.looseObject({
            actualStartTime: v.optional(v.string()),
            actualEndTime: v.optional(v.string()),
            activeLiveChatId: v.optional(v.string()),
            concurrentViewers: v.optional(v.union([v.string(), v.number()])),
          }),
        ),
      }),
    ),
  ),
});

/** Messages are checked one by one by the mapping (a bad one is dropped alone): here only that items is a list. */
const MessageList = v.looseObject({
  items: v.optional(v.array(v.unknown()), []),
  nextPageToken: v.optional(v.string()),
  pollingIntervalMillis: v.optional(v.number()),
  offlineAt: v.optional(v.string()),
});
export type MessageList = v.InferOutput<typeof MessageList>;

export interface LiveVideo {
  videoId: string;
  liveChatId: string | undefined;
  viewers: number | undefined;
  ended: boolean;
}

export interface YouTubeApiOptions {
  /** The Data API root, including `/youtube/v3` (OVERLAY_YOUTUBE_API_URL). */
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/** A Google reason → what it means here. */
function kindOf(status: number, reason: string | undefined, message: string): YouTubeErrorKind {
  if (reason === 'quotaExceeded' || reason === 'dailyLimitExceeded') return 'quota';
  if (reason === 'rateLimitExceeded' || reason === 'userRateLimitExceeded' || status === 429) return 'rate';
  if (reason === 'liveChatEnded' || reason === 'liveChatNotFound' || reason === 'liveChatDisabled')
    return 'chat-ended';
  if (reason === 'keyInvalid' || reason === 'keyExpired' || /API key/i.test(message) || status === 401)
    return 'key';
  if (reason === 'accessNotConfigured' || reason === 'ipRefererBlocked') return 'key';
  if (status === 404) return 'not-found';
  if (status >= 500) return 'server';
  if (status === 403) return 'forbidden';
  return 'bad-response';
}

export class YouTubeApi {
  readonly #fetch: typeof fetch;
  readonly #base: string;

  constructor(private readonly options: YouTubeApiOptions) {
    this.#fetch = options.fetch ?? fetch;
    this.#base = options.baseUrl.replace(/\/+$/, '');
  }

  /** The channel id of a handle (`@name`), or undefined when YouTube knows none. 1 unit. */
  async channelOfHandle(handle: string, signal?: AbortSignal): Promise<string | undefined> {
    const list = await this.#get(ChannelList, 'channels', { part: 'id', forHandle: handle }, signal);
    return list.items[0]?.id;
  }

  /** The channel's live broadcast now, or undefined. 100 units: used sparingly. */
  async liveVideoOf(channelId: string, signal?: AbortSignal): Promise<string | undefined> {
    const list = await this.#get(
      SearchList,
      'search',
      { part: 'id', channelId, eventType: 'live', type: 'video', maxResults: '1' },
      signal,
    );
    return list.items.find((item) => item.id.videoId)?.id.videoId;
  }

  /** A video's live chat and viewer count. 1 unit. */
  async video(videoId: string, signal?: AbortSignal): Promise<LiveVideo | undefined> {
    const list = await this.#get(VideoList, 'videos', { part: 'liveStreamingDetails', id: videoId }, signal);
    const item = list.items?.[0];
    if (!item) return undefined;
    const details = item.liveStreamingDetails;
    const viewers = details?.concurrentViewers === undefined ? undefined : Number(details.concurrentViewers);
    return {
      videoId: item.id,
      liveChatId: details?.activeLiveChatId,
      viewers: viewers !== undefined && Number.isSafeInteger(viewers) && viewers >= 0 ? viewers : undefined,
      ended: details?.actualEndTime !== undefined,
    };
  }

  /** One page of the chat from `pageToken` (the first page is the chat's backlog). 5 units. */
  async messages(
    liveChatId: string,
    pageToken: string | undefined,
    signal?: AbortSignal,
  ): Promise<MessageList> {
    return this.#get(
      MessageList,
      'liveChat/messages',
      {
        liveChatId,
        part: 'id,snippet,authorDetails',
        maxResults: '2000',
        ...(pageToken ? { pageToken } : {}),
      },
      signal,
    );
  }

  async #get<S extends v.GenericSchema>(
    schema: S,
    path: string,
    query: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<v.InferOutput<S>> {
    const url = `${this.#base}/${path}?${new URLSearchParams({ ...query, key: this.options.apiKey })}`;
    const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 10_000);
    let res: Response;
    try {
      res = await this.#fetch(url, {
        headers: { Accept: 'application/json' },
        redirect: 'error',
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      // The message of a failed fetch may carry the URL, and with it the key: say what happened only.
      const why = timeout.aborted
        ? 'timed out'
        : ((err as { cause?: { code?: string } }).cause?.code ?? 'unreachable');
      throw new YouTubeApiError('network', `cannot reach the YouTube Data API (${path}: ${why})`);
    }
    const text = await res.text().catch(() => '');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new YouTubeApiError(
        res.ok ? 'bad-response' : kindOf(res.status, undefined, ''),
        `YouTube answered ${path} with ${res.status} and no JSON`,
        res.status,
      );
    }
    if (!res.ok) {
      const envelope = v.safeParse(ErrorEnvelope, body);
      const reason = envelope.success ? envelope.output.error.errors?.[0]?.reason : undefined;
      const message = envelope.success ? (envelope.output.error.message ?? '') : '';
      const kind = kindOf(res.status, reason, message);
      throw new YouTubeApiError(
        kind,
        `YouTube refused ${path} (${res.status}${reason ? ` ${reason}` : ''})${message ? `: ${message.replace(/key=[^&\s]+/g, 'key=…').slice(0, 200)}` : ''}`,
        res.status,
        reason,
      );
    }
    const parsed = v.safeParse(schema, body);
    if (!parsed.success)
      throw new YouTubeApiError(
        'bad-response',
        `YouTube's answer to ${path} is not what the Data API documents: ${errorMessage(parsed.issues[0]?.message)}`,
      );
    return parsed.output;
  }
}
