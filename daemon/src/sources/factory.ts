// The daemon's real sources, one per platform: what the source manager builds from each entry.
import { KickSource, type KickSourceOptions } from './kick/index.js';
import type { SourceFactory } from './manager.js';
import { TikTokEventSource, type TikTokOptions } from './tiktok/index.js';
import { TwitchSource, type TwitchSourceOptions } from './twitch/source.js';
import { YouTubeSource, type YouTubeSourceOptions } from './youtube/source.js';

export interface PlatformOptions {
  tiktok?: TikTokOptions;
  twitch?: TwitchSourceOptions;
  youtube?: YouTubeSourceOptions;
  /** Intervals of the Kick source (its chatroom id comes from each entry). */
  kick?: Omit<KickSourceOptions, 'chatroomId'>;
}

export function platformSources(options: PlatformOptions = {}): SourceFactory {
  return (entry, ctx) => {
    switch (entry.platform) {
      case 'tiktok':
        return new TikTokEventSource(entry.channel, ctx, options.tiktok);
      case 'twitch':
        return new TwitchSource(entry.channel, ctx, options.twitch);
      case 'youtube':
        return new YouTubeSource(entry.channel, ctx, options.youtube);
      case 'kick':
        return new KickSource(entry.channel, ctx, {
          ...options.kick,
          ...(entry.chatroomId !== undefined ? { chatroomId: entry.chatroomId } : {}),
        });
    }
  };
}
