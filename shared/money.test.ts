import { describe, expect, it } from 'vitest';
import { giftCurrency, giftValueText } from './money.js';

describe('gift value in the unit of its platform', () => {
  it('reads diamonds, bits, Kicks and money as each platform counts them', () => {
    expect(giftValueText('tiktok', 1000)).toBe('1,000 diamonds');
    expect(giftValueText('api', 1)).toBe('1 diamond');
    expect(giftValueText(undefined, 2)).toBe('2 diamonds');
    expect(giftValueText('twitch', 1)).toBe('1 bit');
    expect(giftValueText('twitch', 100)).toBe('100 bits');
    expect(giftValueText('kick', 1)).toBe('1 Kick');
    expect(giftValueText('kick', 50)).toBe('50 Kicks');
    expect(giftValueText('youtube', 500, 'EUR')).toBe('€5.00');
    expect(giftValueText('youtube', 500)).toBe('5.00');
    expect(giftValueText('kofi', 300, 'USD')).toBe('$3.00');
    expect(giftValueText('mixed', 1234)).toBe('1,234');
  });

  it('keeps a currency only where the platform counts in money', () => {
    expect(giftCurrency('youtube', 'JPY')).toBe('JPY');
    expect(giftCurrency('streamlabs', 'EUR')).toBe('EUR');
    expect(giftCurrency('youtube', 'euro')).toBeUndefined();
    expect(giftCurrency('twitch', 'USD')).toBeUndefined();
    expect(giftCurrency('tiktok', 'USD')).toBeUndefined();
    expect(giftCurrency('api', 'USD')).toBeUndefined();
  });
});
