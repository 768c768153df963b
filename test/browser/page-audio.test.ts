// The overlay page's one audio queue in Chromium: speech rendered by espeak-ng and
// sounds play in order and never over each other, at most 20 wait; video alerts play in the alert widget.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { api, startTestDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
let browser: Browser;
let overlayId: string;

/** A silent 16-bit mono PCM WAV of `ms` milliseconds. */
function silentWav(ms: number): Buffer {
  const rate = 8000;
  const data = Math.round((rate * ms) / 1000) * 2;
  const wav = Buffer.alloc(44 + data);
  wav.write('RIFF', 0, 'latin1');
  wav.writeUInt32LE(36 + data, 4);
  wav.write('WAVEfmt ', 8, 'latin1');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(rate, 24);
  wav.writeUInt32LE(rate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'latin1');
  wav.writeUInt32LE(data, 40);
  return wav;
}

async function upload(name: string, body: Buffer): Promise<void> {
  const res = await fetch(`${daemon.url}/api/media/${name}`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${daemon.adminKey}`, 'Content-Type': 'application/octet-stream' },
    body: new Uint8Array(body),
  });
  expect(res.status).toBeLessThan(300);
}

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  const res = await api(daemon, 'POST', '/api/overlays', {
    name: 'Audio',
    width: 1280,
    height: 720,
    widgets: [
      { id: 'clip', type: 'alert', x: 100, y: 100, width: 600, duration: 3000, video: 'clip.webm' },
      {
        id: 'quiet',
        type: 'alert',
        x: 100,
        y: 400,
        width: 600,
        duration: 3000,
        video: 'clip.webm',
        videoMuted: true,
      },
    ],
  });
  expect(res.status).toBe(201);
  overlayId = ((await res.json()) as { id: string }).id;
  // The first lasts long enough for a flood to queue up behind it. One at a time: the daemon allows
  // ten connections per address.
  for (let i = 0; i < 25; i++)
    await upload(`beep-${String(i).padStart(2, '0')}.wav`, silentWav(i === 0 ? 1500 : 60));
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

interface Played {
  src: string;
  start: number;
  end?: number;
}

/** Opens the overlay with every audio element's play and end recorded (what a listener would hear). */
async function openOverlay(): Promise<Page> {
  const page = await browser.newPage();
  await page.addInitScript(() => {
    const played: { src: string; start: number; end?: number }[] = [];
    (window as unknown as { __played: typeof played }).__played = played;
    const play = HTMLMediaElement.prototype.play;
    HTMLMediaElement.prototype.play = function (this: HTMLMediaElement) {
      if (this instanceof HTMLAudioElement) {
        const entry: { src: string; start: number; end?: number } = {
          src: new URL(this.src).pathname,
          start: performance.now(),
        };
        played.push(entry);
        this.addEventListener('ended', () => {
          entry.end = performance.now();
        });
      }
      return play.call(this);
    };
  });
  await page.goto(`${daemon.url}/overlay/${overlayId}`);
  await expect.poll(() => page.evaluate(() => document.body.dataset.connection)).toBe('open');
  return page;
}

const played = (page: Page) =>
  page.evaluate(() => (window as unknown as { __played: Played[] }).__played.map((p) => ({ ...p })));

async function command(widgetId: string, name: string, payload: Record<string, unknown>): Promise<void> {
  const res = await api(daemon, 'POST', `/api/overlays/${overlayId}/commands`, {
    command: name,
    widgetId,
    payload,
  });
  expect(res.status).toBe(202);
}

function expectNoOverlap(list: Played[]): void {
  for (let i = 1; i < list.length; i++) {
    const before = list[i - 1]!;
    expect(before.end, `${before.src} ended`).toBeDefined();
    expect(list[i]!.start, `${list[i]!.src} started after ${before.src} ended`).toBeGreaterThanOrEqual(
      before.end! - 1,
    );
  }
}

describe('the page audio queue in Chromium', () => {
  it('plays speech from speak rules and sounds in arrival order, one after another', async () => {
    expect(
      (
        await api(daemon, 'PUT', '/api/rules', [
          {
            id: 'say',
            trigger: 'chat',
            actions: [{ kind: 'speak', overlayId, text: '{data.comment}', rate: 2 }],
          },
        ])
      ).status,
    ).toBe(200);
    const page = await openOverlay();
    const say = async (comment: string) =>
      expect(
        (
          await api(daemon, 'POST', '/api/events', {
            type: 'chat',
            user: { uniqueId: 'v', nickname: 'V' },
            data: { comment },
          })
        ).status,
      ).toBe(202);
    await say('first words');
    // Each speech is on the page before the next event: the order is the order of events.
    await expect.poll(async () => (await played(page)).length).toBe(1);
    await command('@page', 'play-sound', { sound: 'beep-00.wav' });
    await say('second words');
    await expect
      .poll(async () => (await played(page)).filter((p) => p.end).length, { timeout: 15_000 })
      .toBe(3);
    const list = await played(page);
    expect(list.map((p) => p.src.replace(/[0-9a-f]{64}/, 'HASH'))).toEqual([
      '/tts/HASH.wav',
      '/assets/beep-00.wav',
      '/tts/HASH.wav',
    ]);
    expect(list[0]!.src).not.toBe(list[2]!.src);
    expectNoOverlap(list);
    // Real speech lasts: the first was heard for a while, not skipped.
    expect(list[0]!.end! - list[0]!.start).toBeGreaterThan(200);
    await page.close();
  });

  it('keeps at most 20 waiting: a flood drops the oldest waiting, the newest are all heard', async () => {
    const page = await openOverlay();
    for (let i = 0; i < 25; i++) {
      await command('@page', 'play-sound', { sound: `beep-${String(i).padStart(2, '0')}.wav` });
    }
    await expect
      .poll(async () => (await played(page)).filter((p) => p.end).length, { timeout: 15_000 })
      .toBe(21);
    // No wait for a 22nd: the queue starts the next sound as soon as one ends, before the end is recorded
    // here (the page's own `ended` handler runs first), so a 22nd would already be in the list.
    const list = await played(page);
    const numbers = list.map((p) => Number(/beep-(\d+)/.exec(p.src)?.[1]));
    expect(numbers.length).toBe(21);
    // The first was already playing; of the 24 that queued behind it, the 20 newest stayed.
    expect(numbers[0]).toBe(0);
    expect(numbers.slice(1)).toEqual(Array.from({ length: 20 }, (_, i) => i + 5));
    expectNoOverlap(list);
    await page.close();
  });
});

describe('video alerts in Chromium', () => {
  it('play the widget video with the alert, with or without its sound', async () => {
    // A one-second webm recorded by Chromium itself from a canvas: a real clip the page must play.
    const recorder = await browser.newPage();
    const base64 = await recorder.evaluate(async () => {
      const canvas = document.createElement('canvas');
      canvas.width = 64;
      canvas.height = 64;
      const g = canvas.getContext('2d')!;
      const stream = canvas.captureStream(25);
      const rec = new MediaRecorder(stream, { mimeType: 'video/webm' });
      const chunks: Blob[] = [];
      rec.ondataavailable = (e) => chunks.push(e.data);
      const stopped = new Promise((resolve) => {
        rec.onstop = resolve;
      });
      rec.start();
      for (let i = 0; i < 20; i++) {
        g.fillStyle = `hsl(${i * 18}, 80%, 50%)`;
        g.fillRect(0, 0, 64, 64);
        // Not a wait for something: the recorder captures frames over real time, so the clip needs this second.
        await new Promise((r) => setTimeout(r, 50));
      }
      rec.stop();
      await stopped;
      const bytes = new Uint8Array(await new Blob(chunks).arrayBuffer());
      let text = '';
      for (const b of bytes) text += String.fromCharCode(b);
      return btoa(text);
    });
    await recorder.close();
    await upload('clip.webm', Buffer.from(base64, 'base64'));

    const page = await openOverlay();
    await command('clip', 'show-alert', { text: 'Big gift!', duration: 3000 });
    await command('quiet', 'show-alert', { text: 'Quiet gift', duration: 3000 });
    const video = page.locator('[data-widget-id="clip"] video');
    await expect.poll(() => video.count()).toBe(1);
    expect(await video.getAttribute('src')).toBe('/assets/clip.webm');
    // It plays: time moves on in the clip.
    await expect
      .poll(() => video.evaluate((v: HTMLVideoElement) => v.currentTime > 0 && !v.paused), { timeout: 5000 })
      .toBe(true);
    expect(await video.evaluate((v: HTMLVideoElement) => v.muted)).toBe(false);
    const quiet = page.locator('[data-widget-id="quiet"] video');
    await expect.poll(() => quiet.count()).toBe(1);
    expect(await quiet.evaluate((v: HTMLVideoElement) => v.muted)).toBe(true);
    expect(await page.locator('[data-widget-id="clip"]').textContent()).toContain('Big gift!');
    await page.close();
  });
});
