// The chat part: each platform's sender registered for `chat` actions (decisions-3 §12). Twitch and
// YouTube follow their sign-in files; Kick goes through the Gatekeeper with the licence.
import type { ChatSenders } from '../chat/senders.js';
import { createKickChatSender } from '../sources/kick/chat-send.js';
import type { KickEdgeFeed } from '../sources/kick/edge-events.js';
import type { SourceManager } from '../sources/manager.js';
import { createTwitchChatSender } from '../sources/twitch/chat-send.js';
import { createYouTubeChatSender, watchedLiveChats } from '../sources/youtube/chat-send.js';
import type { DataDir } from '../store/data-dir.js';
import type { FileWatcher } from '../store/file-watcher.js';
import { startPart } from './disposal-stack.js';
import type { KickEdgeOptions } from './kick-edge.js';
import type { PlatformAccess, SourcesOptions } from './sources.js';

export interface ChatPart {
  close(): Promise<void>;
}

/** A licence that is never there: Kick's sender then says what is missing instead of being absent. */
const NO_LICENCE = { record: () => undefined, refresh: async () => {} };

export function startChat(
  options: Pick<SourcesOptions, 'remoteConfig'> & { kickEvents?: KickEdgeOptions | undefined },
  ctx: {
    chatSenders: ChatSenders;
    access: PlatformAccess;
    dataDir: DataDir;
    files: FileWatcher;
    sources: SourceManager;
    kickEdge: KickEdgeFeed | undefined;
    log: (line: string) => void;
  },
): Promise<ChatPart> {
  const { chatSenders, access, dataDir, files, sources, log } = ctx;
  return startPart(log, async (stack) => {
    const twitch = createTwitchChatSender({
      apiUrl: access.urls.twitchApi,
      authUrl: access.urls.twitchAuth,
      dataDir: dataDir.root,
      files,
      eventChannel: () => sources.running().find((s) => s.platform === 'twitch')?.channel,
      log,
    });
    stack.push(() => twitch.close(), 'the Twitch chat sender');
    stack.push(chatSenders.register(twitch), 'the Twitch chat sender');

    const youtube = createYouTubeChatSender({
      dataDir: dataDir.root,
      files,
      urls: access.urls,
      remoteConfig: () => options.remoteConfig?.(),
      configArrival: access.configArrival,
      liveChats: () => watchedLiveChats(sources),
      log,
    });
    stack.push(() => youtube.close(), 'the YouTube chat sender');
    stack.push(chatSenders.register(youtube), 'the YouTube chat sender');

    const kick = createKickChatSender(
      options.kickEvents
        ? {
            gatekeeperUrl: options.kickEvents.gatekeeperUrl,
            licence: options.kickEvents.licence,
            link: () => ctx.kickEdge?.status(),
          }
        : { gatekeeperUrl: 'http://127.0.0.1', licence: NO_LICENCE },
    );
    stack.push(chatSenders.register(kick), 'the Kick chat sender');
    return {};
  });
}
