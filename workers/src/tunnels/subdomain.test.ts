import { describe, expect, it } from 'vitest';
import { base32, deriveSubdomain } from './subdomain.js';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('base32', () => {
  it('matches the RFC 4648 §10 test vectors, lowercased and unpadded', () => {
    const vectors: [string, string][] = [
      ['', ''],
      ['f', 'my'],
      ['fo', 'mzxq'],
      ['foo', 'mzxw6'],
      ['foob', 'mzxw6yq'],
      ['fooba', 'mzxw6ytb'],
      ['foobar', 'mzxw6ytboi'],
    ];
    for (const [input, output] of vectors) expect(base32(bytes(input))).toBe(output);
  });
});

describe('deriveSubdomain', () => {
  it('is o- and 16 base32 characters, stable for a user, different per user and per secret', async () => {
    const a = await deriveSubdomain('secret-one', 'user-1');
    expect(a).toMatch(/^o-[a-z2-7]{16}$/);
    expect(await deriveSubdomain('secret-one', 'user-1')).toBe(a);
    expect(await deriveSubdomain('secret-one', 'user-2')).not.toBe(a);
    expect(await deriveSubdomain('secret-two', 'user-1')).not.toBe(a);
  });

  it('refuses to derive without a secret', async () => {
    await expect(deriveSubdomain('', 'user-1')).rejects.toThrow(/SUBDOMAIN_SECRET/);
  });
});
