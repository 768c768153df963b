// A small client of the YouTube Data API v3 on fetchJson, one schema per response: the
// channel of a handle, the channel's live broadcast, the broadcast's live chat and viewer count, and the
// chat's messages. The official client needs Node 22; the API is plain JSON over HTTPS. The key rides in
// the query string, as Google documents, and never appears in an error or a log line.
import * as v from 'valibot';
import { parseWith } from '../../../../shared/protocol/index.js';
import { DaemonError, type DaemonErrorCode } from '../../errors.js';
import { FetchError, fetchJson, redact } from '../../http-client/fetch-json.js';

/** What went wrong, as far as what to do next is concerned. */
export type YouTubeErrorCode = Extract<
  DaemonErrorCode,
  | 'quota_exceeded' // the project's daily quota is used up: wait for midnight Pacific time
  | 'rate_limited' // too many requests for now: retry with backoff
  | 'chat_ended' // the live chat is over (or gone): the stream ended
  | 'unauthorized' // the API key is missing, wrong or not allowed for the YouTube Data API
  | 'not_found'
  | 'forbidden'
  | 'upstream_error' // 5xx: retry with backoff
  | 'unreachable'
  | 'timeout'
  | 'aborted'
  | 'bad_response'
>;

export class YouTubeApiError extends DaemonError {
  declare readonly code: YouTubeErrorCode;
  constructor(
    code: YouTubeErrorCode,
    message: string,
    readonly status?: number,
    readonly reason?: string,
  ) {
    super(code, message);
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
function codeOf(status: number, reason: string | undefined, message: string): YouTubeErrorCode {
  if (reason === 'quotaExceeded' || reason === 'dailyLimitExceeded') return 'quota_exceeded';
  if (reason === 'rateLimitExceeded' || reason === 'userRateLimitExceeded' || status === 429)
    return 'rate_limited';
  if (reason === 'liveChatEnded' || reason === 'liveChatNotFound' || reason === 'liveChatDisabled')
    return 'chat_ended';
  if (reason === 'keyInvalid' || reason === 'keyExpired' || /API key/i.test(message) || status === 401)
    return 'unauthorized';
  if (reason === 'accessNotConfigured' || reason === 'ipRefererBlocked') return 'unauthorized';
  if (status === 404) return 'not_found';
  if (status >= 500) return 'upstream_error';
  if (status === 403) return 'forbidden';
  return 'bad_response';
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
    const key = this.options.apiKey;
    const url = `${this.#base}/${path}?${new URLSearchParams({ ...query, key })}`;
    try {
      const answer = await fetchJson(url, {
        schema,
        timeoutMs: this.options.timeoutMs ?? 10_000,
        ...(signal ? { signal } : {}),
        secrets: [key],
        service: `the YouTube Data API (${path})`,
        fetch: this.#fetch,
      });
      return answer.value;
    } catch (err) {
      if (!(err instanceof FetchError)) throw err;
      if (err.code === 'aborted') throw err;
      if (err.status === undefined) {
        // No answer: say what happened only (a failed fetch's own message may carry the URL, and the key).
        const why = err.code === 'timeout' ? 'timed out' : err.reason;
        throw new YouTubeApiError(
          err.code === 'timeout' ? 'timeout' : 'unreachable',
          `cannot reach the YouTube Data API (${path}: ${why})`,
        );
      }
      if (err.code === 'bad_response')
        throw new YouTubeApiError(
          'bad_response',
          `YouTube's answer to ${path} is not what the Data API documents: ${err.reason}`,
          err.status,
        );
      if (err.body === undefined)
        throw new YouTubeApiError(
          codeOf(err.status, undefined, ''),
          `YouTube answered ${path} with ${err.status} and no JSON`,
          err.status,
        );
      const envelope = parseWith(ErrorEnvelope, err.body);
      const reason = envelope.ok ? envelope.value.error.errors?.[0]?.reason : undefined;
      const message = envelope.ok ? (envelope.value.error.message ?? '') : '';
      throw new YouTubeApiError(
        codeOf(err.status, reason, message),
        `YouTube refused ${path} (${err.status}${reason ? ` ${reason}` : ''})${message ? `: ${redact(message, [key]).slice(0, 200)}` : ''}`,
        err.status,
        reason,
      );
    }
  }
}
