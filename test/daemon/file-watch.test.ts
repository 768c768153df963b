// The running daemon follows the files other programs write into its data directory (`connect twitch`,
// `connect youtube`, `login`, `tunnel up`, hand edits) through one watcher: one watch per folder, however
// many parts follow a file, and each sign-in file taken up by the chat senders without a restart.
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { startRemoteAccess } from '../../daemon/src/remote-access.js';
import { writeTwitchTokens } from '../../daemon/src/sources/twitch/auth.js';
import { writeYouTubeTokens, youTubeFile } from '../../daemon/src/sources/youtube/token-file.js';
import { DEFAULT_CONFIG, type RemoteConfig } from '../../shared/config.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { waitFor } from '../support/wait.js';

const GOOGLE_CLIENT = 'client-1.apps.googleusercontent.com';
const config: RemoteConfig = {
  ...DEFAULT_CONFIG,
  platforms: { youtube: { oauth_client_id: GOOGLE_CLIENT, oauth_client_secret: 'secret' } },
};

let daemon: TestDaemon | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

describe("the daemon's file watches", () => {
  it('watches the data directory and overlays/ once each, with remote access and both chat senders on top', async () => {
    daemon = await startTestDaemon();
    const remote = await startRemoteAccess(daemon, { gatekeeper: 'http://127.0.0.1:9', log: () => {} });
    daemon.onClose(() => remote.close(), 'remote access');
    // rules.json, settings.json, admin.key, twitch.json (the sources and the chat sender), youtube.json,
    // license.json and tunnel.json share the data directory's one watch; the overlays have theirs.
    expect(daemon.files.watches).toBe(2);
    await remote.close();
    expect(daemon.files.watches).toBe(2);
  });

  it('takes up a Twitch sign-in written by another program, and its removal', async () => {
    daemon = await startTestDaemon();
    const twitch = daemon.chatSenders.get('twitch');
    expect(twitch?.unavailable()).toMatch(/^not signed in to Twitch/);
    await writeTwitchTokens(daemon.dataDir.root, {
      accessToken: 'access',
      refreshToken: 'refresh',
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      scopes: ['user:write:chat'],
      userId: '1001',
      login: 'streamer',
      clientId: 'twitch-client',
    });
    await waitFor(() => twitch?.unavailable() === undefined, 3000, 'the sign-in');
    expect(twitch?.senderName()).toBe('streamer');
    await rm(`${daemon.dataDir.root}/twitch.json`);
    await waitFor(() => twitch?.senderName() === undefined, 3000, 'the sign-out');
    expect(twitch?.unavailable()).toMatch(/^not signed in to Twitch/);
  });

  it('takes up a YouTube sign-in written by another program, and its removal', async () => {
    daemon = await startTestDaemon({ remoteConfig: () => config });
    const youtube = daemon.chatSenders.get('youtube');
    expect(youtube?.unavailable()).toMatch(/^no YouTube sign-in to write in chat with/);
    await writeYouTubeTokens(daemon.dataDir.root, {
      accessToken: 'access',
      refreshToken: 'refresh',
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      scopes: ['https://www.googleapis.com/auth/youtube.force-ssl'],
      clientId: GOOGLE_CLIENT,
      channelTitle: 'Streamer',
    });
    await waitFor(() => youtube?.senderName() === 'Streamer', 3000, 'the sign-in');
    // Signed in; what is missing now is a live chat to write in.
    expect(youtube?.unavailable()).toMatch(/^no YouTube live chat is being read now/);
    await rm(youTubeFile(daemon.dataDir.root));
    await waitFor(() => youtube?.senderName() === undefined, 3000, 'the sign-out');
    expect(youtube?.unavailable()).toMatch(/^no YouTube sign-in to write in chat with/);
  });
});
