// Patreon as the membership platform: OAuth authorize URL, token endpoint, and the v2 identity (JSON:API).
import * as v from 'valibot';
import { parseWith } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';
import {
  type Membership,
  MembershipError,
  type MembershipIdentity,
  type MembershipProvider,
  type PlatformTokens,
} from './provider.js';

const PATREON_AUTHORIZE_URL = 'https://www.patreon.com/oauth2/authorize';
const PATREON_API_BASE = 'https://www.patreon.com';
const PATREON_SCOPE = 'identity identity.memberships';
/** A slow platform must not hold a login or a validation open for long. */
const TIMEOUT_MS = 8000;

// Linkage for the campaign and tiers is only present for relationships named in `include`.
const IDENTITY_QUERY = new URLSearchParams({
  include: 'memberships,memberships.currently_entitled_tiers,memberships.campaign',
  'fields[member]': 'patron_status,currently_entitled_amount_cents',
  'fields[tier]': 'amount_cents,title',
}).toString();

const TokenResponse = v.object({
  access_token: v.pipe(v.string(), v.minLength(1)),
  refresh_token: v.pipe(v.string(), v.minLength(1)),
});

/** The OAuth error body of a token endpoint refusal. */
const OAuthError = v.object({ error: v.string() });

const Linkage = v.object({ id: v.string(), type: v.string() });
const Resource = v.object({
  id: v.string(),
  type: v.string(),
  attributes: v.optional(v.record(v.string(), v.unknown()), {}),
  relationships: v.optional(
    v.record(v.string(), v.object({ data: v.optional(v.nullable(v.union([Linkage, v.array(Linkage)]))) })),
    {},
  ),
});
const IdentityDocument = v.object({
  data: v.object({ id: v.pipe(v.string(), v.minLength(1)), type: v.literal('user') }),
  included: v.optional(v.array(Resource), []),
});
const MemberAttributes = v.object({ patron_status: v.optional(v.nullable(v.string()), null) });
const TierAttributes = v.object({ amount_cents: v.pipe(v.number(), v.safeInteger(), v.minValue(0)) });

type Resource = v.InferOutput<typeof Resource>;

function linked(resource: Resource, name: string): { id: string; type: string }[] {
  const data = resource.relationships[name]?.data;
  if (!data) return [];
  return Array.isArray(data) ? data : [data];
}

/** Reads the memberships out of a JSON:API identity document. */
function membershipsFromIdentity(document: unknown): MembershipIdentity {
  const parsed = parseWith(IdentityDocument, document);
  if (!parsed.ok) throw new MembershipError('unavailable', `identity response: ${parsed.error}`);
  const { data, included } = parsed.value;
  const tierAmounts = new Map<string, number>();
  for (const resource of included) {
    if (resource.type !== 'tier') continue;
    const attributes = parseWith(TierAttributes, resource.attributes);
    if (attributes.ok) tierAmounts.set(resource.id, attributes.value.amount_cents);
  }
  const memberships: Membership[] = [];
  for (const resource of included) {
    if (resource.type !== 'member') continue;
    const attributes = parseWith(MemberAttributes, resource.attributes);
    if (!attributes.ok) throw new MembershipError('unavailable', `identity member: ${attributes.error}`);
    const campaign = linked(resource, 'campaign')[0];
    if (!campaign) continue;
    const status = attributes.value.patron_status;
    memberships.push({
      campaignId: campaign.id,
      active: status === 'active_patron',
      status,
      entitledTiers: linked(resource, 'currently_entitled_tiers').map((tier) => ({
        id: tier.id,
        // A tier whose object was not included counts as the cheapest: it can never outrank a known one.
        amountCents: tierAmounts.get(tier.id) ?? 0,
      })),
    });
  }
  return { userId: data.id, memberships };
}

export function patreonProvider(env: GatekeeperEnv): MembershipProvider {
  const apiBase = (env.MEMBERSHIP_API_BASE || PATREON_API_BASE).replace(/\/+$/, '');

  async function call(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (err) {
      throw new MembershipError('unavailable', `membership platform unreachable: ${String(err)}`);
    }
  }

  /**
   * Only the token endpoint refusing the grant itself (RFC 6749 §5.2 `invalid_grant`: revoked, used or
   * unknown) is a verdict on the user. Everything else — a changed client secret (`invalid_client`), a
   * proxy's 403, 429, 5xx, an identity error after a good refresh — is our or the platform's trouble
   * and must not cost a paying member the licence (the grace period applies).
   */
  async function tokenFailure(res: Response): Promise<MembershipError> {
    const body = parseWith(OAuthError, await res.json().catch(() => null));
    const error = body.ok ? body.value.error : null;
    const refused = (res.status === 400 || res.status === 401) && error === 'invalid_grant';
    return new MembershipError(
      refused ? 'rejected' : 'unavailable',
      `token endpoint answered ${res.status}${error ? ` ${error}` : ''}`,
    );
  }

  async function token(form: Record<string, string>): Promise<PlatformTokens> {
    const res = await call(`${apiBase}/api/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: new URLSearchParams({
        ...form,
        client_id: env.MEMBERSHIP_CLIENT_ID,
        client_secret: env.MEMBERSHIP_CLIENT_SECRET,
      }),
    });
    if (!res.ok) throw await tokenFailure(res);
    const parsed = parseWith(TokenResponse, await res.json().catch(() => null));
    if (!parsed.ok) throw new MembershipError('unavailable', `token response: ${parsed.error}`);
    return { accessToken: parsed.value.access_token, refreshToken: parsed.value.refresh_token };
  }

  return {
    authorizeUrl({ state, redirectUri }) {
      const url = new URL(env.MEMBERSHIP_AUTHORIZE_URL || PATREON_AUTHORIZE_URL);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', env.MEMBERSHIP_CLIENT_ID);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('scope', PATREON_SCOPE);
      url.searchParams.set('state', state);
      return url.toString();
    },
    exchangeCode: (code, redirectUri) =>
      token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri }),
    refresh: (refreshToken) => token({ grant_type: 'refresh_token', refresh_token: refreshToken }),
    async identity(accessToken) {
      const res = await call(`${apiBase}/api/oauth2/v2/identity?${IDENTITY_QUERY}`, {
        headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json' },
      });
      if (!res.ok) {
        throw new MembershipError('unavailable', `identity endpoint answered ${res.status}`);
      }
      return membershipsFromIdentity(await res.json().catch(() => null));
    },
  };
}
