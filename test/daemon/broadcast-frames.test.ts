// Broadcasts reach every client as WebSocket text frames (interface §6: JSON text), encoded once for all of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestDaemon, subscribe, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
let overlayId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  overlayId = daemon.overlays.list()[0]!.id;
});
afterAll(() => daemon?.stop());

describe('broadcast frames', () => {
  it('sends stream-event and overlay-command to several clients as identical text frames', async () => {
    const clients = await Promise.all([1, 2, 3].map(() => subscribe(daemon, overlayId)));
    const frames = clients.map((client) => {
      const seen: { text: string; binary: boolean }[] = [];
      client.ws.on('message', (data, isBinary) => seen.push({ text: String(data), binary: isBinary }));
      return seen;
    });
    const gift = {
      type: 'gift',
      user: { uniqueId: 'u1', nickname: 'Ünïcödé 🎁' },
      data: { giftName: 'Rose', repeatCount: 1 },
    };
    expect((await api(daemon, 'POST', '/api/events', gift)).status).toBe(202);
    for (const client of clients) await client.next((m) => m.type === 'stream-event');
    // The demo overlay of a fresh data directory has widgets.
    const widgetId = daemon.overlays.get(overlayId)?.widgets[0]?.id ?? 'missing';
    const sent = await api(daemon, 'POST', `/api/overlays/${overlayId}/commands`, {
      command: 'reset',
      widgetId,
    });
    expect(sent.status).toBeLessThan(300);
    for (const client of clients) await client.next((m) => m.type === 'overlay-command');
    for (const seen of frames) {
      expect(seen.length).toBe(2);
      for (const frame of seen) expect(frame.binary).toBe(false);
      expect(seen.map((f) => f.text)).toEqual(frames[0]?.map((f) => f.text));
    }
    const event = JSON.parse(frames[0]?.[0]?.text ?? '{}');
    expect(event).toMatchObject({ type: 'stream-event', event: { user: { nickname: 'Ünïcödé 🎁' } } });
    for (const client of clients) client.close();
  });
});
