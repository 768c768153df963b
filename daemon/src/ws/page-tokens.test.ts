// Unit tests of page tokens (interface §5.2, decisions §3): single use, bound to one overlay, expiry, and the cap on pending tokens.
import { describe, expect, it } from 'vitest';
import { PageTokens } from './page-tokens.js';

describe('PageTokens', () => {
  it('issues distinct 192-bit base64url tokens, each usable once and for its overlay only', () => {
    const tokens = new PageTokens();
    const issued = new Set<string>();
    // More than one refill of the random pool.
    for (let i = 0; i < 1000; i++) issued.add(tokens.issue('a'));
    expect(issued.size).toBe(1000);
    for (const token of issued) expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const [first, second] = [...issued];
    expect(tokens.consume(first ?? '', 'b')).toBe(false);
    expect(tokens.consume(first ?? '', 'a')).toBe(false);
    expect(tokens.consume(second ?? '', 'a')).toBe(true);
    expect(tokens.consume(second ?? '', 'a')).toBe(false);
  });

  it('forgets tokens once they expire', () => {
    let now = 0;
    const tokens = new PageTokens({ ttlMs: 1000, now: () => now });
    const old = tokens.issue('a');
    now = 600;
    const young = tokens.issue('a');
    now = 1200;
    tokens.issue('a');
    expect(tokens.size).toBe(2);
    expect(tokens.consume(old, 'a')).toBe(false);
    expect(tokens.consume(young, 'a')).toBe(true);
  });

  it('keeps at most maxPending tokens, dropping the oldest first, spent ones not counted', () => {
    const tokens = new PageTokens({ maxPending: 3 });
    const [a, b, c] = [tokens.issue('x'), tokens.issue('x'), tokens.issue('x')];
    expect(tokens.consume(b, 'x')).toBe(true);
    const d = tokens.issue('x');
    // b was spent, so a and c are still pending next to d.
    expect(tokens.size).toBe(3);
    const e = tokens.issue('x');
    expect(tokens.size).toBe(3);
    expect(tokens.consume(a, 'x')).toBe(false);
    for (const token of [c, d, e]) expect(tokens.consume(token, 'x')).toBe(true);
    // A long run of issue-and-spend stays correct across the internal compactions.
    for (let i = 0; i < 20_000; i++) expect(tokens.consume(tokens.issue('x'), 'x')).toBe(true);
    expect(tokens.size).toBe(0);
  });

  it('forgets the tokens of a deleted overlay', () => {
    const tokens = new PageTokens();
    const gone = tokens.issue('gone');
    const kept = tokens.issue('kept');
    tokens.revokeOverlay('gone');
    expect(tokens.consume(gone, 'gone')).toBe(false);
    expect(tokens.consume(kept, 'kept')).toBe(true);
  });
});
