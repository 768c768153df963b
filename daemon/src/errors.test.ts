import { describe, expect, it } from 'vitest';
import { BackupError, BackupTooLarge } from './backup/backup.js';
import { UsageError } from './cli/usage-error.js';
import { DAEMON_ERROR_CODES, DaemonError, errorCode } from './errors.js';
import { FetchError } from './http-client/fetch-json.js';
import { JournalWriteError } from './ingest/ingest.js';
import { LoginError } from './licence/login.js';
import { MediaOutside, PayloadTooLarge } from './media/media.js';
import { PlatformUrlError } from './sources/platform-urls.js';
import { LiveSourceError } from './sources/tiktok/source.js';
import { TwitchAuthError } from './sources/twitch/auth.js';
import { HelixError } from './sources/twitch/helix.js';
import { NoTwitchClientId } from './sources/twitch/sign-in.js';
import { YouTubeApiError } from './sources/youtube/api.js';
import { DiskFullError } from './store/atomic-file.js';
import { DataDirError } from './store/data-dir.js';
import { WriteFailed } from './store/synced-json-file.js';
import { CloudflaredMissingError } from './tunnel/cloudflared.js';
import { TunnelCommandError } from './tunnel/commands.js';

describe("the daemon's error codes", () => {
  it('every error class carries a code from the one list, and keeps its message', () => {
    const full = new DiskFullError('/data/rules.json', 'ENOSPC');
    const cases: [DaemonError, string, string][] = [
      [new UsageError('--port must be a number'), 'usage', '--port must be a number'],
      [
        new PlatformUrlError('OVERLAY_TWITCH_API_URL is not a URL'),
        'invalid_config',
        'OVERLAY_TWITCH_API_URL is not a URL',
      ],
      [new NoTwitchClientId(), 'not_configured', expect.stringContaining('Twitch client id')],
      [new LoginError('no sign-in arrived'), 'login_failed', 'no sign-in arrived'],
      [new TunnelCommandError('Not signed in.'), 'tunnel_failed', 'Not signed in.'],
      [
        new CloudflaredMissingError('cloudflared'),
        'missing_executable',
        expect.stringContaining('not found'),
      ],
      [new JournalWriteError('events.db is read-only'), 'write_failed', 'events.db is read-only'],
      [new PayloadTooLarge('media files are limited to 10 bytes'), 'payload_too_large', expect.any(String)],
      [new MediaOutside('the folder lies outside media/'), 'outside_folder', expect.any(String)],
      [new BackupError('not a backup'), 'backup_failed', 'not a backup'],
      [new BackupTooLarge('more than 2 GiB'), 'payload_too_large', 'more than 2 GiB'],
      [full, 'disk_full', expect.stringMatching(/^the disk is full \(ENOSPC\): \/data\/rules\.json/)],
      [new WriteFailed('/data/rules.json', full), 'disk_full', full.message],
      [new WriteFailed('/data/rules.json', new Error('EIO')), 'write_failed', expect.stringContaining('EIO')],
      [new DataDirError('/data', 'cannot write /data'), 'data_dir', 'cannot write /data'],
      [new LiveSourceError('rate-limited', 'slow down', 1000), 'rate_limited', 'slow down'],
      [new LiveSourceError('network', 'offline?'), 'unreachable', 'offline?'],
      [new TwitchAuthError('denied', 'declined'), 'denied', 'declined'],
      [
        new HelixError('missing_scope', 'needs bits:read', 403, 'bits:read'),
        'missing_scope',
        'needs bits:read',
      ],
      [new YouTubeApiError('quota_exceeded', 'quota used up', 403), 'quota_exceeded', 'quota used up'],
      [
        new FetchError('timeout', 'x gave no answer within 5 s', 'no answer within 5 s'),
        'timeout',
        expect.any(String),
      ],
    ];
    for (const [error, code, message] of cases) {
      expect(error).toBeInstanceOf(DaemonError);
      expect(error).toBeInstanceOf(Error);
      expect({ code: error.code, message: error.message }).toEqual({ code, message });
      expect(DAEMON_ERROR_CODES).toContain(error.code);
      expect(errorCode(error)).toBe(code);
    }
    expect(new DiskFullError('/q', 'EDQUOT').systemCode).toBe('EDQUOT');
    expect(errorCode(new Error('anything else'))).toBe('internal');
  });

  it('codes are written one way: lower case words joined by underscores, each once', () => {
    for (const code of DAEMON_ERROR_CODES) expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(new Set(DAEMON_ERROR_CODES).size).toBe(DAEMON_ERROR_CODES.length);
  });
});
