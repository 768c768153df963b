// A viewer's points on each platform across every session, as the `!points` chat command reads them from
// the journal: one platform's points are not another's, test events count in none, they outlast the
// removal of old events, and a journal written before they were kept starts from the events it has.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal, MIGRATIONS } from '../../daemon/src/journal/journal.js';
import type { Platform, StreamEvent } from '../../shared/protocol/index.js';
import { makeDataDir } from '../support/daemon.js';

const DAY = 24 * 60 * 60 * 1000;
const chat = (uniqueId: string, platform: Platform): StreamEvent => ({
  type: 'chat',
  platform,
  user: { uniqueId, nickname: uniqueId.toUpperCase() },
  data: { comment: 'hi' },
});
const cheer = (uniqueId: string, bits: number): StreamEvent => ({
  type: 'gift',
  platform: 'twitch',
  user: { uniqueId, nickname: uniqueId.toUpperCase() },
  data: { giftName: 'Bits', repeatCount: bits, diamondCount: 1 },
});

let dir: string;
let now: number;
beforeEach(async () => {
  dir = await makeDataDir();
  now = Date.UTC(2026, 0, 1);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const open = () =>
  Journal.open({
    path: join(dir, 'events.db'),
    log: () => {},
    now: () => now,
    points: () => ({ perDiamond: 1, perLike: 0, perChat: 10, perFollow: 0, perShare: 0 }),
  });

describe("a viewer's points on a platform", () => {
  it('add up over sessions on that platform only, without test events, and outlast old events', () => {
    const journal = open();
    try {
      const points = (platform: Platform, uniqueId: string) => journal.viewerPoints(platform, uniqueId);
      journal.append(chat('ann', 'twitch'), 'twitch');
      journal.append(cheer('ann', 100), 'twitch');
      journal.append(chat('ann', 'kick'), 'kick');
      journal.append(chat('ann', 'twitch'), 'twitch', undefined, true);
      // A new session a day later.
      now += DAY;
      journal.append(chat('ann', 'twitch'), 'twitch');
      expect(points('twitch', 'ann')).toBe(120);
      expect(points('kick', 'ann')).toBe(10);
      expect(points('youtube', 'ann')).toBe(0);
      expect(points('twitch', 'nobody')).toBe(0);
      // The session board `{top}` reads has the session in progress only.
      expect(journal.leaderboard('session', 'points', 3)).toEqual([
        expect.objectContaining({ nickname: 'ANN', points: 10 }),
      ]);
      now += 30 * DAY;
      expect(journal.prune(7)).toBeGreaterThan(0);
      expect(points('twitch', 'ann')).toBe(120);
    } finally {
      journal.close();
    }
  });

  it('start from the kept events in a journal written before they were kept', () => {
    const path = join(dir, 'events.db');
    const journal = open();
    journal.append(cheer('ann', 50), 'twitch');
    journal.append(chat('ann', 'kick'), 'kick');
    journal.close();
    // Back to the schema before this one: the table and its trigger gone, and what later versions added.
    const old = new Database(path);
    old.exec('DROP TRIGGER events_points; DROP TABLE viewer_points; ALTER TABLE audit DROP COLUMN detail;');
    old.exec('DROP INDEX events_arrived; ALTER TABLE events DROP COLUMN arrived_at;');
    old.pragma(`user_version = ${MIGRATIONS.findIndex((sql) => sql.includes('CREATE TABLE viewer_points'))}`);
    old.close();

    const reopened = open();
    try {
      expect(reopened.viewerPoints('twitch', 'ann')).toBe(50);
      expect(reopened.viewerPoints('kick', 'ann')).toBe(10);
      reopened.append(chat('ann', 'kick'), 'kick');
      expect(reopened.viewerPoints('kick', 'ann')).toBe(20);
    } finally {
      reopened.close();
    }
  });
});
