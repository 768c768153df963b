import { describe, expect, it } from 'vitest';
import { qrPath, relayStateWords, viewerCountWords } from './public-overlay.js';

const OVERLAY = '3b7e6f0a-2c41-4d8e-9f15-6a0b7c8d9e21';
const entry = (state: 'connecting' | 'connected' | 'backoff' | 'error' | 'off', detail?: string) => ({
  overlayId: OVERLAY,
  state,
  viewers: 0,
  ...(detail ? { detail } : {}),
});

describe('a public overlay in words', () => {
  it('says each relay state as a streamer reads it, with the daemon reason', () => {
    expect(relayStateWords(undefined)).toBe('Starting…');
    expect(relayStateWords(entry('connecting'))).toBe('Connecting to the relay…');
    expect(relayStateWords(entry('connected'))).toBe('Live: viewers can watch');
    expect(relayStateWords(entry('backoff', 'next try in 8 s'))).toBe(
      'Connection lost, trying again soon: next try in 8 s',
    );
    expect(relayStateWords(entry('error', 'another daemon publishes this overlay'))).toBe(
      'Not published: another daemon publishes this overlay',
    );
    expect(relayStateWords(entry('off', 'Premium needed'))).toBe('Not published: Premium needed');
  });

  it('counts viewers in words', () => {
    expect([0, 1, 2, 12_345].map(viewerCountWords)).toEqual([
      'No viewers',
      '1 viewer',
      '2 viewers',
      '12,345 viewers',
    ]);
  });

  it('draws the viewer URL as a QR code with its quiet zone and finder patterns', () => {
    const { size, d } = qrPath(`https://gate.example/v/o-abc/${OVERLAY}`);
    // Version 5 (37 modules) at level M, two modules of quiet zone each side.
    expect(size).toBe(41);
    const dark = new Set(d.match(/M\d+ \d+/g));
    // The top-left finder pattern: a 7 × 7 ring starting after the quiet zone, nothing in the zone.
    for (let i = 2; i < 9; i++) {
      expect(dark.has(`M${i} 2`)).toBe(true);
      expect(dark.has(`M2 ${i}`)).toBe(true);
    }
    expect(dark.has('M0 0')).toBe(false);
    expect(dark.has('M1 1')).toBe(false);
    // Another URL, another code.
    expect(qrPath(`https://gate.example/v/o-abd/${OVERLAY}`).d).not.toBe(d);
  });
});
