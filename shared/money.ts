// What a gift is worth in the words of the platform it came from: TikTok's diamonds, Twitch's bits, the
// Super Chat's own currency on YouTube, Kick's Kicks. Every gift event carries its worth as `diamondCount × repeatCount`;
// only the unit differs (a Twitch cheer is `repeatCount` bits of 1 each, a Super Chat is cents).
import { PLATFORM_TABLE, type PlatformId, platformFacts } from './platforms.js';

const COUNT = new Intl.NumberFormat('en-US');

/** A currency code as YouTube sends it (ISO 4217), or undefined for anything else. */
export function currencyCode(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Z]{3}$/.test(value) ? value : undefined;
}

/** The currency of a gift's value where its platform counts in money (a Super Chat's), else undefined. */
export function giftCurrency(platform: PlatformId, currency: unknown): string | undefined {
  return platformFacts(platform)?.unit.code === 'currency' ? currencyCode(currency) : undefined;
}

/** `cents` of `currency` as a person reads money: "€5.00"; without a currency, "5.00". */
function moneyOf(cents: number, currency: string | undefined): string {
  if (currency) {
    try {
      return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(cents / 100);
    } catch {
      // A code Intl does not know: the number and the code, as the platform gave it.
      return `${(cents / 100).toFixed(2)} ${currency}`;
    }
  }
  return (cents / 100).toFixed(2);
}

/**
 * An amount of gift value in the unit of `platform` (the platform table's): "1,000 diamonds" (TikTok and
 * events posted to the API, whose `diamondCount` the API documents as diamonds), "100 bits" (Twitch),
 * "€5.00" (YouTube and the money providers, the amount in cents of `currency`), "50 Kicks" (Kick);
 * `mixed`, the figure alone.
 */
export function giftValueText(
  platform: PlatformId | 'mixed' | undefined,
  amount: number,
  currency?: string,
): string {
  // Bits, diamonds and cents added up are in no unit: the figure alone.
  if (platform === 'mixed') return COUNT.format(amount);
  const { unit } = (platform && platformFacts(platform)) || PLATFORM_TABLE.api;
  if (unit.code === 'currency') return moneyOf(amount, currency);
  return `${COUNT.format(amount)} ${amount === 1 ? unit.one : unit.many}`;
}
