// GET /favicon.ico: the daemon's icon, for a browser that asks for one (a tab opened on `/`, a bookmark).
// Drawn here, once, as a 32×32 icon file: a rounded square in the overlay's accent colour with a white
// "live" dot, so no binary file has to ship.
import type { Polka } from 'polka';

const SIZE = 32;
const ACCENT = [0xff, 0x3b, 0x5c] as const;

/** Coverage (0–1) of a pixel by a shape given as a signed distance (negative inside), smoothed a pixel wide. */
const cover = (distance: number) => Math.min(1, Math.max(0, 0.5 - distance));

function pixel(x: number, y: number): [number, number, number, number] {
  const cx = x + 0.5 - SIZE / 2;
  const cy = y + 0.5 - SIZE / 2;
  // The rounded square: half-size 15, corner radius 7.
  const qx = Math.abs(cx) - (15 - 7);
  const qy = Math.abs(cy) - (15 - 7);
  const square = Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - 7;
  const dot = Math.hypot(cx, cy) - 7;
  const alpha = cover(square);
  const white = cover(dot);
  const mix = (c: number) => Math.round(c * (1 - white) + 255 * white);
  return [mix(ACCENT[0]), mix(ACCENT[1]), mix(ACCENT[2]), Math.round(alpha * 255)];
}

/** An .ico file holding one 32-bit bitmap (rows bottom-up, BGRA, then an all-clear AND mask). */
function drawIcon(): Buffer {
  const pixels = SIZE * SIZE * 4;
  const mask = (SIZE / 8) * SIZE; // one bit per pixel, rows of 4 bytes
  const image = 40 + pixels + mask;
  const file = Buffer.alloc(6 + 16 + image);
  file.writeUInt16LE(0, 0); // reserved
  file.writeUInt16LE(1, 2); // an icon
  file.writeUInt16LE(1, 4); // one image
  file.writeUInt8(SIZE, 6);
  file.writeUInt8(SIZE, 7);
  file.writeUInt8(0, 8); // no palette
  file.writeUInt16LE(1, 10); // planes
  file.writeUInt16LE(32, 12); // bits per pixel
  file.writeUInt32LE(image, 14);
  file.writeUInt32LE(22, 18); // where the image starts
  const bmp = 22;
  file.writeUInt32LE(40, bmp); // BITMAPINFOHEADER
  file.writeInt32LE(SIZE, bmp + 4);
  file.writeInt32LE(SIZE * 2, bmp + 8); // the colour rows and the mask rows
  file.writeUInt16LE(1, bmp + 12);
  file.writeUInt16LE(32, bmp + 14);
  file.writeUInt32LE(pixels + mask, bmp + 20);
  let at = bmp + 40;
  for (let row = SIZE - 1; row >= 0; row--)
    for (let x = 0; x < SIZE; x++) {
      const [r, g, b, a] = pixel(x, row);
      file.writeUInt8(b, at);
      file.writeUInt8(g, at + 1);
      file.writeUInt8(r, at + 2);
      file.writeUInt8(a, at + 3);
      at += 4;
    }
  return file;
}

const ICON = drawIcon();

export function mountFavicon(app: Polka): void {
  app.get('/favicon.ico', (_req, res) => {
    res.writeHead(200, {
      'Content-Type': 'image/x-icon',
      'Content-Length': ICON.length,
      'Cache-Control': 'public, max-age=86400',
    });
    res.end(ICON);
  });
}
