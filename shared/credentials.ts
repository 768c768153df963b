// `GET /api/sources/credentials`: where the Twitch client id and the YouTube key in force come from, so
// the Sources view never says "not set" while the Gatekeeper's config (which may give them) is on its way.
import * as v from 'valibot';

/** Whether the Gatekeeper's config arrived: `waiting` at start, `unreachable` when the first try failed. */
export const CONFIG_ARRIVALS = ['waiting', 'arrived', 'unreachable'] as const;
export type ConfigArrival = (typeof CONFIG_ARRIVALS)[number];

/** settings.json's, the Gatekeeper config's, or none: because the config is awaited, out of reach, or has none. */
export const CredentialOrigin = v.picklist(['settings', 'gatekeeper', 'waiting', 'unreachable', 'none']);
export type CredentialOrigin = v.InferOutput<typeof CredentialOrigin>;

export const CredentialsReport = v.object({
  twitchClientId: CredentialOrigin,
  youtubeApiKey: CredentialOrigin,
});
export type CredentialsReport = v.InferOutput<typeof CredentialsReport>;
