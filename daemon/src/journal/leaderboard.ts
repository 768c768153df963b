// Viewers' figures as boards read them: the top viewers by a metric in one session or across all, with the
// unit their gift value is in.
import type Database from 'better-sqlite3';
import { currencyCode } from '../../../shared/money.js';
import { PLATFORMS, type Platform } from '../../../shared/protocol/index.js';

/** One order for equal figures on every board: the name, then the id (`nickname` and `uniqueId` columns). */
export const TIE_ORDER = 'nickname COLLATE NOCASE ASC, uniqueId ASC';

export interface ViewerFigures {
  uniqueId: string;
  nickname: string;
  diamonds: number;
  likes: number;
  chats: number;
  points: number;
  /** The platform whose unit `diamonds` are in (`mixed`: added up from several units, the figure alone). */
  platform?: Platform | 'mixed';
  /** The currency of YouTube gifts in `diamonds` (cents), when every one said the same. */
  currency?: string;
}

export type LeaderboardMetric = 'diamonds' | 'likes' | 'chats' | 'points';

/** A viewer's figures as read from the database: a unit it does not know is left out, not null. */
export type FiguresRow = Omit<ViewerFigures, 'platform' | 'currency'> & {
  platform: string | null;
  currency: string | null;
};

export function figuresOf({ platform, currency, ...figures }: FiguresRow): ViewerFigures {
  const known = platform === 'mixed' || (PLATFORMS as readonly (string | null)[]).includes(platform);
  return {
    ...figures,
    ...(known ? { platform: platform as Platform | 'mixed' } : {}),
    ...(known && currencyCode(currency) ? { currency: currency as string } : {}),
  };
}

/** The top viewers of one session by a metric. */
export function sessionLeaderboard(
  db: Database.Database,
  session: number,
  metric: LeaderboardMetric,
  limit: number,
): ViewerFigures[] {
  return (
    db
      .prepare(
        `SELECT user_id AS uniqueId, nickname, diamonds, likes, chats, points, platform, currency FROM viewers
           WHERE session = ? AND ${metric} > 0 ORDER BY ${metric} DESC, ${TIE_ORDER} LIMIT ?`,
      )
      .all(session, limit) as FiguresRow[]
  ).map(figuresOf);
}

/** The top viewers across every session by a metric. */
export function allTimeLeaderboard(
  db: Database.Database,
  metric: LeaderboardMetric,
  limit: number,
): ViewerFigures[] {
  const top = db
    .prepare(
      `SELECT user_id AS uniqueId, MAX(nickname) AS nickname, SUM(diamonds) AS diamonds, SUM(likes) AS likes,
         SUM(chats) AS chats, SUM(points) AS points FROM viewers GROUP BY user_id
       HAVING SUM(${metric}) > 0 ORDER BY SUM(${metric}) DESC, ${TIE_ORDER} LIMIT ?`,
    )
    .all(limit) as Omit<FiguresRow, 'platform' | 'currency'>[];
  if (top.length === 0) return [];
  // The units of the few viewers ranked, by their key in every session (no scan, whatever the table's
  // size). Across sessions a unit holds when every session with gifts had that one (one unknown: `mixed`).
  const units = db
    .prepare(
      `SELECT user_id AS uniqueId, platform, currency FROM viewers
       WHERE session IN (SELECT id FROM sessions) AND user_id IN (SELECT value FROM json_each(?)) AND diamonds > 0`,
    )
    .all(JSON.stringify(top.map((v) => v.uniqueId))) as Pick<
    FiguresRow,
    'uniqueId' | 'platform' | 'currency'
  >[];
  const merged = new Map<string, Pick<FiguresRow, 'platform' | 'currency'>>();
  for (const { uniqueId, platform, currency } of units) {
    const seen = merged.get(uniqueId);
    merged.set(
      uniqueId,
      seen
        ? {
            platform: seen.platform === platform ? platform : (seen.platform ?? platform) ? 'mixed' : null,
            currency: seen.currency === currency ? currency : null,
          }
        : { platform, currency },
    );
  }
  return top.map((v) =>
    figuresOf({ ...v, ...(merged.get(v.uniqueId) ?? { platform: null, currency: null }) }),
  );
}
