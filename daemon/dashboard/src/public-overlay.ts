// What the Overlays view says about a public overlay's relay: its state in words, the viewer count, and
// the QR code of the viewer URL as one SVG path.
import { encode } from 'uqr';
import type { RelayStatus } from '../../../shared/protocol/relay.js';

const STATE_WORDS: Record<RelayStatus['state'], string> = {
  connecting: 'Connecting to the relay…',
  connected: 'Live: viewers can watch',
  backoff: 'Connection lost, trying again soon',
  error: 'Not published',
  off: 'Not published',
};

/** The relay's state as a streamer reads it, with the daemon's reason when it gives one. */
export function relayStateWords(entry: RelayStatus | undefined): string {
  if (!entry) return 'Starting…';
  const words = STATE_WORDS[entry.state];
  return entry.detail ? `${words}: ${entry.detail}` : words;
}

/** "No viewers", "1 viewer", "12,345 viewers". */
export function viewerCountWords(count: number): string {
  if (count === 0) return 'No viewers';
  return count === 1 ? '1 viewer' : `${count.toLocaleString('en-US')} viewers`;
}

/** A QR code as an SVG path of its dark modules on a `size` × `size` grid (quiet zone included). */
export function qrPath(text: string): { size: number; d: string } {
  // Level M: a phone still reads it from a screen photo with some glare.
  const qr = encode(text, { ecc: 'M', border: 2 });
  const parts: string[] = [];
  qr.data.forEach((row, y) => {
    row.forEach((dark, x) => {
      if (dark) parts.push(`M${x} ${y}h1v1h-1z`);
    });
  });
  return { size: qr.size, d: parts.join('') };
}
