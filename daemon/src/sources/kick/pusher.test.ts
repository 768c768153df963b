import { describe, expect, it } from 'vitest';
import { checkPlatformUrl, platformUrlsFromEnv } from '../platform-urls.js';
import { pusherSocketUrl } from './pusher.js';

describe("Kick's chat socket address", () => {
  it('gets the protocol query the daemon speaks', () => {
    expect(pusherSocketUrl('wss://ws-us2.pusher.com/app/32cbd69e4b950bf97679')).toBe(
      'wss://ws-us2.pusher.com/app/32cbd69e4b950bf97679?protocol=7&client=js&version=8.6.0&flash=false',
    );
    expect(pusherSocketUrl('ws://127.0.0.1:6001/app/key')).toBe(
      'ws://127.0.0.1:6001/app/key?protocol=7&client=js&version=8.6.0&flash=false',
    );
  });

  it('must end in /app/<key>', () => {
    expect(() => pusherSocketUrl('wss://ws.example/socket')).toThrow(
      `Kick's chat socket address must end in /app/<app key>, got "wss://ws.example/socket"`,
    );
  });

  it('OVERLAY_KICK_PUSHER_URL: plain ws:// only on 127.0.0.0/8, no query; OVERLAY_KICK_SITE_URL likewise', () => {
    expect(() => checkPlatformUrl('kickPusher', 'ws://example.com/app/key')).toThrow(
      'OVERLAY_KICK_PUSHER_URL may use ws:// only on 127.0.0.0/8 (anything else must be wss://), got "ws://example.com/app/key"',
    );
    expect(() => checkPlatformUrl('kickPusher', 'wss://example.com/app/key?protocol=7')).toThrow(
      'OVERLAY_KICK_PUSHER_URL must not carry credentials, a query or a fragment',
    );
    expect(() => checkPlatformUrl('kickSite', 'http://kick.example')).toThrow(
      /OVERLAY_KICK_SITE_URL may use http:\/\//,
    );
    const urls = platformUrlsFromEnv({
      OVERLAY_KICK_PUSHER_URL: 'ws://127.0.0.1:6001/app/key',
      OVERLAY_KICK_SITE_URL: 'http://127.0.0.1:8788/',
    });
    expect(urls.kickPusher).toBe('ws://127.0.0.1:6001/app/key');
    expect(urls.kickSite).toBe('http://127.0.0.1:8788');
    expect(platformUrlsFromEnv({}).kickSite).toBe('https://kick.com');
  });
});
