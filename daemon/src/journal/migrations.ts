// The schema of events.db: each version's SQL, applied in order by database.ts.
/** Schema versions, applied in order; `PRAGMA user_version` says how many ran (exported for upgrade tests). */
export const MIGRATIONS: readonly string[] = [
  // Each event row carries what it adds to its session and its viewer; a trigger adds it, so an event
  // is one INSERT (one call into SQLite, one implicit transaction) on the daemon's hot path.
  `CREATE TABLE events (
     seq INTEGER PRIMARY KEY,
     at INTEGER NOT NULL,
     source TEXT NOT NULL,
     type TEXT NOT NULL,
     session INTEGER NOT NULL,
     user_id TEXT NOT NULL,
     nickname TEXT NOT NULL,
     gifts INTEGER NOT NULL,
     diamonds INTEGER NOT NULL,
     likes INTEGER NOT NULL,
     chats INTEGER NOT NULL,
     follows INTEGER NOT NULL,
     shares INTEGER NOT NULL,
     subscribes INTEGER NOT NULL,
     viewers INTEGER NOT NULL,
     points INTEGER NOT NULL,
     event TEXT NOT NULL
   );
   CREATE INDEX events_type ON events (type, seq);
   CREATE TABLE sessions (
     id INTEGER PRIMARY KEY,
     -- A session's events are the seqs from first_seq to last_seq (one session at a time): no index needed.
     first_seq INTEGER NOT NULL,
     last_seq INTEGER NOT NULL,
     started_at INTEGER NOT NULL,
     ended_at INTEGER,
     last_at INTEGER NOT NULL,
     gifts INTEGER NOT NULL DEFAULT 0,
     diamonds INTEGER NOT NULL DEFAULT 0,
     likes INTEGER NOT NULL DEFAULT 0,
     follows INTEGER NOT NULL DEFAULT 0,
     shares INTEGER NOT NULL DEFAULT 0,
     subscribes INTEGER NOT NULL DEFAULT 0,
     chats INTEGER NOT NULL DEFAULT 0,
     peak_viewers INTEGER NOT NULL DEFAULT 0
   );
   CREATE TABLE viewers (
     session INTEGER NOT NULL,
     user_id TEXT NOT NULL,
     nickname TEXT NOT NULL,
     diamonds INTEGER NOT NULL DEFAULT 0,
     likes INTEGER NOT NULL DEFAULT 0,
     chats INTEGER NOT NULL DEFAULT 0,
     points INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (session, user_id)
   ) WITHOUT ROWID;
   CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
   CREATE TRIGGER events_add AFTER INSERT ON events BEGIN
     UPDATE sessions SET last_at = NEW.at, last_seq = NEW.seq, gifts = gifts + NEW.gifts, diamonds = diamonds + NEW.diamonds,
       likes = likes + NEW.likes, follows = follows + NEW.follows, shares = shares + NEW.shares,
       subscribes = subscribes + NEW.subscribes, chats = chats + NEW.chats,
       peak_viewers = MAX(peak_viewers, NEW.viewers)
     WHERE id = NEW.session;
     INSERT INTO viewers (session, user_id, nickname, diamonds, likes, chats, points)
       SELECT NEW.session, NEW.user_id, NEW.nickname, NEW.diamonds, NEW.likes, NEW.chats, NEW.points
       WHERE NEW.diamonds + NEW.likes + NEW.chats + NEW.points > 0
     ON CONFLICT (session, user_id) DO UPDATE SET nickname = excluded.nickname,
       diamonds = diamonds + excluded.diamonds, likes = likes + excluded.likes,
       chats = chats + excluded.chats, points = points + excluded.points;
   END;`,
  // Test events (from the test panel or the `event` command) are kept and marked, and count in no total;
  // overlay commands are kept a while, so a page resumes with them after a restart.
  `ALTER TABLE events ADD COLUMN test INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE sessions ADD COLUMN test_events INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE commands (
     seq INTEGER PRIMARY KEY,
     at INTEGER NOT NULL,
     overlay TEXT NOT NULL,
     command TEXT NOT NULL
   );
   DROP TRIGGER events_add;
   CREATE TRIGGER events_add AFTER INSERT ON events WHEN NEW.test = 0 BEGIN
     UPDATE sessions SET last_at = NEW.at, last_seq = NEW.seq, gifts = gifts + NEW.gifts, diamonds = diamonds + NEW.diamonds,
       likes = likes + NEW.likes, follows = follows + NEW.follows, shares = shares + NEW.shares,
       subscribes = subscribes + NEW.subscribes, chats = chats + NEW.chats,
       peak_viewers = MAX(peak_viewers, NEW.viewers)
     WHERE id = NEW.session;
     INSERT INTO viewers (session, user_id, nickname, diamonds, likes, chats, points)
       SELECT NEW.session, NEW.user_id, NEW.nickname, NEW.diamonds, NEW.likes, NEW.chats, NEW.points
       WHERE NEW.diamonds + NEW.likes + NEW.chats + NEW.points > 0
     ON CONFLICT (session, user_id) DO UPDATE SET nickname = excluded.nickname,
       diamonds = diamonds + excluded.diamonds, likes = likes + excluded.likes,
       chats = chats + excluded.chats, points = points + excluded.points;
   END;
   CREATE TRIGGER events_add_test AFTER INSERT ON events WHEN NEW.test <> 0 BEGIN
     UPDATE sessions SET last_at = NEW.at, last_seq = NEW.seq, test_events = test_events + 1 WHERE id = NEW.session;
   END;`,
  // Gift value is in its platform's unit (TikTok's diamonds, Twitch's bits, a Super Chat's currency in
  // cents): each event keeps its platform (and a YouTube gift its currency), and each viewer's figures the
  // unit their `diamonds` are in, `mixed` once gifts in different units were added up; a board names it
  // without reading events. Viewers whose gift events are still kept get their unit now.
  `ALTER TABLE events ADD COLUMN platform TEXT;
   ALTER TABLE events ADD COLUMN currency TEXT;
   ALTER TABLE viewers ADD COLUMN platform TEXT;
   ALTER TABLE viewers ADD COLUMN currency TEXT;
   UPDATE viewers SET platform = g.platform, currency = g.currency FROM (
     SELECT session, user_id,
       CASE WHEN COUNT(DISTINCT p) = 1 THEN MAX(p) ELSE 'mixed' END AS platform,
       CASE WHEN COUNT(DISTINCT c) = 1 AND COUNT(c) = COUNT(*) AND MAX(p) = 'youtube' THEN MAX(c) END AS currency
     FROM (SELECT session, user_id, COALESCE(json_extract(event, '$.platform'), 'api') AS p,
             json_extract(event, '$.data.currency') AS c
           FROM events WHERE type = 'gift' AND test = 0 AND diamonds > 0)
     GROUP BY session, user_id
   ) AS g WHERE viewers.session = g.session AND viewers.user_id = g.user_id;
   UPDATE viewers SET currency = NULL WHERE currency IS NOT NULL AND NOT (currency GLOB '[A-Z][A-Z][A-Z]');
   DROP TRIGGER events_add;
   CREATE TRIGGER events_add AFTER INSERT ON events WHEN NEW.test = 0 BEGIN
     UPDATE sessions SET last_at = NEW.at, last_seq = NEW.seq, gifts = gifts + NEW.gifts, diamonds = diamonds + NEW.diamonds,
       likes = likes + NEW.likes, follows = follows + NEW.follows, shares = shares + NEW.shares,
       subscribes = subscribes + NEW.subscribes, chats = chats + NEW.chats,
       peak_viewers = MAX(peak_viewers, NEW.viewers)
     WHERE id = NEW.session;
     INSERT INTO viewers (session, user_id, nickname, diamonds, likes, chats, points, platform, currency)
       SELECT NEW.session, NEW.user_id, NEW.nickname, NEW.diamonds, NEW.likes, NEW.chats, NEW.points,
         CASE WHEN NEW.diamonds > 0 THEN NEW.platform END, CASE WHEN NEW.diamonds > 0 THEN NEW.currency END
       WHERE NEW.diamonds + NEW.likes + NEW.chats + NEW.points > 0
     ON CONFLICT (session, user_id) DO UPDATE SET nickname = excluded.nickname,
       diamonds = diamonds + excluded.diamonds, likes = likes + excluded.likes,
       chats = chats + excluded.chats, points = points + excluded.points,
       platform = CASE WHEN excluded.diamonds <= 0 THEN platform WHEN diamonds <= 0 THEN excluded.platform
         WHEN platform IS excluded.platform THEN platform ELSE 'mixed' END,
       currency = CASE WHEN excluded.diamonds <= 0 THEN currency WHEN diamonds <= 0 THEN excluded.currency
         WHEN currency = excluded.currency THEN currency END;
   END;`,
  // What paired devices changed (devices/audit.ts): ids never go back, so a page's `next` stays valid.
  `CREATE TABLE audit (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     at INTEGER NOT NULL,
     device_id TEXT NOT NULL,
     device_name TEXT NOT NULL,
     method TEXT NOT NULL,
     path TEXT NOT NULL,
     status INTEGER NOT NULL
   );`,
  // Each viewer's points on each platform across every session (what the `!points` chat command answers),
  // kept like the viewers' figures when old events go; a journal written before starts from its kept events.
  `CREATE TABLE viewer_points (
     platform TEXT NOT NULL,
     user_id TEXT NOT NULL,
     points INTEGER NOT NULL,
     PRIMARY KEY (platform, user_id)
   ) WITHOUT ROWID;
   INSERT INTO viewer_points (platform, user_id, points)
     SELECT COALESCE(platform, json_extract(event, '$.platform'), 'api'), user_id, SUM(points) FROM events
     WHERE test = 0 AND points <> 0 GROUP BY 1, 2;
   CREATE TRIGGER events_points AFTER INSERT ON events WHEN NEW.test = 0 AND NEW.points <> 0 BEGIN
     INSERT INTO viewer_points (platform, user_id, points) VALUES (COALESCE(NEW.platform, 'api'), NEW.user_id, NEW.points)
     ON CONFLICT (platform, user_id) DO UPDATE SET points = points + excluded.points;
   END;`,
  // Overlay commands are kept a row per overlay per turn (at most COMMANDS_PER_ROW), not a row each: a
  // rule set firing 40 commands per gift writes one row, not 40. `last_seq` is the highest number in the
  // row, `at` its newest time, `commands` a JSON array of [seq, at, command] in order. The table of single
  // commands stays, empty.
  `CREATE TABLE IF NOT EXISTS command_rows (
     last_seq INTEGER PRIMARY KEY,
     at INTEGER NOT NULL,
     overlay TEXT NOT NULL,
     count INTEGER NOT NULL,
     commands TEXT NOT NULL
   );
   INSERT INTO command_rows (last_seq, at, overlay, count, commands)
     SELECT seq, at, overlay, 1, '[[' || seq || ',' || at || ',' || command || ']]' FROM commands;
   DELETE FROM commands;`,
  // What an audited request acted on, in words (the rule a "test this rule" ran), when its path does not say.
  'ALTER TABLE audit ADD COLUMN detail TEXT;',
  // An event that reached the daemon late (caught up: the Kick feed's backlog after a night off, a replayed
  // socket) is kept at its own time and keeps when it arrived, so the dashboard lists what came while the
  // streamer was away. Live events leave it NULL (and out of the index).
  `ALTER TABLE events ADD COLUMN arrived_at INTEGER;
   CREATE INDEX events_arrived ON events (arrived_at) WHERE arrived_at IS NOT NULL;`,
];

/** How many schema versions this daemon knows (a newer journal is not opened). */
export const MIGRATION_COUNT = MIGRATIONS.length;
