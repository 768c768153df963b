// Where each platform credential in force comes from: settings.json, the Gatekeeper's config, or nowhere
// yet (the config has not arrived, or the Gatekeeper cannot be reached). The sources, the Twitch sign-in
// and the Sources view say it in those words rather than "not set" while the config is on its way.

import type { ConfigArrival, CredentialOrigin } from '../../../shared/credentials.js';

export type { ConfigArrival, CredentialOrigin, CredentialsReport } from '../../../shared/credentials.js';

/** Where one credential comes from: settings.json's, the config's, or why there is none. */
export function credentialOrigin(
  fromSettings: string | undefined,
  fromConfig: string | undefined,
  arrival: ConfigArrival,
): CredentialOrigin {
  if (fromSettings) return 'settings';
  if (fromConfig) return 'gatekeeper';
  return arrival === 'arrived' ? 'none' : arrival;
}

/** The words for a credential that is missing, by what became of the Gatekeeper's config. */
export function missingCredential(what: string, arrival: ConfigArrival, ownOne: string): string {
  switch (arrival) {
    case 'waiting':
      return `waiting for the Gatekeeper's config, which may give the ${what}`;
    case 'unreachable':
      return `cannot reach the Gatekeeper, whose config may give the ${what}: check this computer's connection, or ${ownOne}`;
    case 'arrived':
      return `no ${what}: the Gatekeeper's config gives none; ${ownOne}`;
  }
}
