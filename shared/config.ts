// The remote configuration served by the Gatekeeper's GET /config and enforced by the daemon (decisions §2).
import * as v from 'valibot';
import { Tier } from './protocol/index.js';

export const TierLimits = v.object({
  maxOverlays: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  maxRules: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  tunnel: v.boolean(),
});
export type TierLimits = v.InferOutput<typeof TierLimits>;

// Unknown keys are kept: operators may add fields that newer daemons read (interface §9.2).
export const RemoteConfig = v.looseObject({
  version: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  tiers: v.object({ free: TierLimits, premium: TierLimits }),
  auth: v.object({ loginUrl: v.pipe(v.string(), v.minLength(1)) }),
  upgrade: v.object({
    /** Where upgrading starts; older daemons link here (see `pageUrl`). */
    url: v.pipe(v.string(), v.url()),
    message: v.string(),
    /**
     * The project's own page on the membership platform (its tiers, a Join button): what "See Premium"
     * and the CLI's upgrade prompt open. Absent: taken from `url` unless that is only the platform's
     * home page, and then no link is shown, since a home page does not say whom to join.
     */
    pageUrl: v.optional(
      v.pipe(
        v.string(),
        v.url(),
        v.check((u) => /^https?:\/\//i.test(u), 'must be an http or https URL'),
      ),
    ),
  }),
  grace: v.object({ hours: v.optional(v.pipe(v.number(), v.minValue(0)), 72) }),
  membership: v.object({
    /** Membership-platform tier id → our tier, e.g. `{"1234567": "premium"}`. */
    tiers: v.record(v.string(), Tier),
  }),
  /**
   * The platforms' application credentials a daemon may use when its settings.json has none
   *: the operator's Twitch client id and YouTube Data API key; and the Google client (a "TVs and Limited
   * Input devices" OAuth client, whose secret Google treats as not confidential) that YouTube sign-ins
   * for chat sending use.
   */
  platforms: v.optional(
    v.looseObject({
      twitch: v.optional(v.looseObject({ client_id: v.pipe(v.string(), v.minLength(1), v.maxLength(100)) })),
      youtube: v.optional(
        v.looseObject({
          api_key: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
          oauth_client_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
          oauth_client_secret: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
        }),
      ),
    }),
  ),
});
export type RemoteConfig = v.InferOutput<typeof RemoteConfig>;

/** What the Gatekeeper serves when KV holds no valid `config`, and what the daemon assumes offline. */
export const DEFAULT_CONFIG: RemoteConfig = {
  version: 1,
  tiers: {
    free: { maxOverlays: 3, maxRules: 5, tunnel: false },
    premium: { maxOverlays: 50, maxRules: 200, tunnel: true },
  },
  auth: { loginUrl: '/auth/membership' },
  upgrade: {
    url: 'https://www.patreon.com/',
    message: 'Become a Premium member to reach your overlays from anywhere.',
  },
  grace: { hours: 72 },
  membership: { tiers: {} },
};

/** An http(s) URL that names no page: only a site's home page (no path, query or fragment). */
const HOME_PAGE = /^https?:\/\/[^/?#]+\/?$/i;

/**
 * The page "See Premium" opens: `upgrade.pageUrl`, else `upgrade.url` when it names a page, else none
 * (the bundled default's `url` is only the membership platform's home page).
 */
export function premiumPageUrl(config: RemoteConfig): string | undefined {
  if (config.upgrade.pageUrl) return config.upgrade.pageUrl;
  const { url } = config.upgrade;
  return /^https?:\/\//i.test(url) && !HOME_PAGE.test(url) ? url : undefined;
}
