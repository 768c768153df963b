import { describe, expect, it } from 'vitest';
import type { Membership } from './provider.js';
import { resolveTier } from './tier.js';

const member = (over: Partial<Membership>): Membership => ({
  campaignId: '1000',
  active: true,
  status: 'active_patron',
  entitledTiers: [],
  ...over,
});
const tiers = { '11': 'premium', '12': 'free' } as const;

describe('resolveTier', () => {
  it('maps the most expensive entitled tier of an active member of our campaign', () => {
    const identity = {
      userId: 'u',
      memberships: [
        member({
          entitledTiers: [
            { id: '11', amountCents: 500 },
            { id: '12', amountCents: 100 },
          ],
        }),
      ],
    };
    expect(resolveTier(identity, '1000', tiers)).toBe('premium');
    const cheaperPremium = {
      userId: 'u',
      memberships: [
        member({
          entitledTiers: [
            { id: '11', amountCents: 100 },
            { id: '12', amountCents: 500 },
          ],
        }),
      ],
    };
    expect(resolveTier(cheaperPremium, '1000', tiers)).toBe('free');
  });

  it('gives free to lapsed members, other campaigns, unmapped tiers and people who never pledged', () => {
    const entitled = [{ id: '11', amountCents: 500 }];
    expect(resolveTier({ userId: 'u', memberships: [] }, '1000', tiers)).toBe('free');
    const declined = member({ active: false, status: 'declined_patron', entitledTiers: entitled });
    expect(resolveTier({ userId: 'u', memberships: [declined] }, '1000', tiers)).toBe('free');
    const elsewhere = member({ campaignId: '2000', entitledTiers: entitled });
    expect(resolveTier({ userId: 'u', memberships: [elsewhere] }, '1000', tiers)).toBe('free');
    const unmapped = member({ entitledTiers: [{ id: '99', amountCents: 900 }] });
    expect(resolveTier({ userId: 'u', memberships: [unmapped] }, '1000', tiers)).toBe('free');
    const inherited = member({ entitledTiers: [{ id: 'toString', amountCents: 900 }] });
    expect(resolveTier({ userId: 'u', memberships: [inherited] }, '1000', tiers)).toBe('free');
  });
});
