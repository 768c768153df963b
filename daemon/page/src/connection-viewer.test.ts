// The viewer page's relay connection on a fake clock: receive-only, reconnecting with backoff and jitter,
// resuming from the last seq it saw.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { VIEWER_PING } from '../../../shared/protocol/relay.js';
import { FakeTimers } from '../../../test/support/fake-timers.js';
import {
  connectViewer,
  VIEWER_PING_MS,
  VIEWER_SILENCE_MS,
  type ViewerSocket,
  viewerRetryDelay,
  viewerSocketUrl,
} from './connection.js';
import { readGlobals } from './globals.js';
import { assetUrl, setAssetBase } from './overlay-view.js';

const OVERLAY = '5f0c7a52-8d1e-4f0b-9a51-3c2d8e7f6a10';
const RELAY = `/v/o-abc/${OVERLAY}/ws`;

class FakeSocket implements ViewerSocket {
  sent: string[] = [];
  closed = false;
  private listeners = new Map<string, ((event: { data: unknown; code: number }) => void)[]>();
  constructor(readonly url: string) {}
  send(data: string): void {
    if (this.closed) throw new Error('send on a closed socket');
    this.sent.push(data);
  }
  close(): void {
    this.closed = true;
  }
  addEventListener(type: string, listener: (event: { data: unknown; code: number }) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  emit(type: 'open' | 'close' | 'error', code = 1006): void {
    for (const l of this.listeners.get(type) ?? []) l({ data: undefined, code } as never);
  }
  receive(message: unknown): void {
    for (const l of this.listeners.get('message') ?? []) l({ data: JSON.stringify(message), code: 0 });
  }
}

const overlay = { name: 'Public', width: 1920, height: 1080 };
const init = { type: 'init', overlay, widgets: [] };
const event = (seq: number) => ({
  type: 'stream-event',
  seq,
  at: 1,
  event: { type: 'follow', platform: 'api', user: { uniqueId: `u${seq}`, nickname: `U${seq}` }, data: {} },
});

function setup(random: () => number = () => 0.5) {
  const timers = new FakeTimers();
  const sockets: FakeSocket[] = [];
  const messages: string[] = [];
  const states: string[] = [];
  const conn = connectViewer(
    { overlayId: OVERLAY, relay: RELAY },
    {
      onMessage: (m) => messages.push(m.type === 'stream-event' ? `event ${m.seq}` : m.type),
      onState: (s) => states.push(s),
    },
    {
      openSocket: (url) => {
        const socket = new FakeSocket(url);
        sockets.push(socket);
        return socket;
      },
      timers,
      random,
      location: { protocol: 'https:', host: 'gate.example' },
    },
  );
  const last = () => sockets[sockets.length - 1] as FakeSocket;
  return { timers, sockets, messages, states, conn, last };
}

/** Every frame the page sent, on every socket, must be an init or the exact ping. */
function expectOnlyInitAndPing(sockets: FakeSocket[]): void {
  for (const socket of sockets) {
    socket.sent.forEach((frame, i) => {
      if (i === 0) expect(JSON.parse(frame)).toMatchObject({ action: 'init', overlayId: OVERLAY });
      else expect(frame).toBe(VIEWER_PING);
    });
  }
}

let storage: Map<string, string>;
beforeEach(() => {
  storage = new Map();
  vi.stubGlobal('sessionStorage', {
    getItem: (k: string) => storage.get(k) ?? null,
    setItem: (k: string, v: string) => void storage.set(k, v),
    removeItem: (k: string) => void storage.delete(k),
  });
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('viewer page globals', () => {
  const w = (globals: Record<string, unknown>) => globals as unknown as Window;
  it('runs receive-only when a relay is injected, and as the local page with a token', () => {
    expect(readGlobals(w({ __APP_OVERLAY_ID__: OVERLAY, __APP_RELAY__: RELAY }))).toEqual({
      overlayId: OVERLAY,
      relay: RELAY,
    });
    expect(readGlobals(w({ __APP_OVERLAY_ID__: OVERLAY, __APP_TOKEN__: 't' }))).toEqual({
      overlayId: OVERLAY,
      token: 't',
    });
    expect(readGlobals(w({ __APP_OVERLAY_ID__: OVERLAY }))).toBeUndefined();
  });

  it('takes a relay on its own origin only', () => {
    for (const relay of ['//evil.example/ws', 'https://evil.example/ws', 'v/x/ws', 42])
      expect(readGlobals(w({ __APP_OVERLAY_ID__: OVERLAY, __APP_RELAY__: relay }))).toBeUndefined();
  });

  it('dials wss on https, ws on http, on the page host', () => {
    expect(viewerSocketUrl({ protocol: 'https:', host: 'gate.example' }, RELAY)).toBe(
      `wss://gate.example${RELAY}`,
    );
    expect(viewerSocketUrl({ protocol: 'http:', host: '127.0.0.1:8787' }, RELAY)).toBe(
      `ws://127.0.0.1:8787${RELAY}`,
    );
  });
});

describe('viewer page media', () => {
  it('finds media beside the viewer page, and takes a full URL as it is', () => {
    setAssetBase(`/v/o-abc/${OVERLAY}/assets/`);
    try {
      expect(assetUrl('ab12.png')).toBe(`/v/o-abc/${OVERLAY}/assets/ab12.png`);
      expect(assetUrl(`https://gate.example/v/o-abc/${OVERLAY}/assets/ab12.png`)).toBe(
        `https://gate.example/v/o-abc/${OVERLAY}/assets/ab12.png`,
      );
    } finally {
      setAssetBase('/assets/');
    }
    expect(assetUrl('a b.png')).toBe('/assets/a%20b.png');
  });
});

describe('viewer reconnect delays', () => {
  it('wait at least 1 s and at most a ceiling that doubles from 2 s up to 30 s', () => {
    const lowest = [1, 2, 3, 4, 5, 6, 50].map((n) => viewerRetryDelay(n, () => 0));
    const highest = [1, 2, 3, 4, 5, 6, 50].map((n) => viewerRetryDelay(n, () => 0.999_999_9));
    expect(lowest).toEqual([1000, 1000, 1000, 1000, 1000, 1000, 1000]);
    expect(highest).toEqual([2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
  });

  it('spread uniformly over the whole window (full jitter)', () => {
    expect(viewerRetryDelay(5, () => 0.5)).toBe(15_500);
    expect(viewerRetryDelay(5, () => 0.25)).toBe(8250);
    const seen = new Set(Array.from({ length: 200 }, () => viewerRetryDelay(5)));
    expect(seen.size).toBeGreaterThan(100);
    for (const ms of seen) expect(ms >= 1000 && ms <= 30_000).toBe(true);
  });
});

describe('the viewer connection', () => {
  it('sends init without a token on open, then only a ping every 30 s', () => {
    const { timers, last, sockets, states } = setup();
    expect(last().url).toBe(`wss://gate.example${RELAY}`);
    last().emit('open');
    expect(JSON.parse(last().sent[0] ?? '')).toEqual({ action: 'init', overlayId: OVERLAY });
    last().receive(init);
    expect(states).toEqual(['open']);
    for (let i = 0; i < 4; i++) {
      timers.advance(VIEWER_PING_MS);
      last().receive({ type: 'pong' });
    }
    expect(last().sent.slice(1)).toEqual([VIEWER_PING, VIEWER_PING, VIEWER_PING, VIEWER_PING]);
    expectOnlyInitAndPing(sockets);
  });

  it('ignores pong and applies page messages as they come', () => {
    const { last, messages } = setup();
    last().emit('open');
    last().receive(init);
    last().receive({ type: 'pong' });
    last().receive(event(7));
    last().receive({ type: 'resumed', from: 5, to: 7, replayed: 1, gap: false });
    expect(messages).toEqual(['init', 'event 7', 'resumed']);
  });

  it('reconnects after a close with a growing, jittered wait, and resumes from the last seq seen', () => {
    const { timers, sockets, last, states } = setup(() => 0.5);
    last().emit('open');
    last().receive(init);
    last().receive(event(41));
    last().receive(event(42));
    last().emit('close');
    expect(states).toEqual(['open', 'closed']);
    expect(sockets).toHaveLength(1);
    // First retry: 1–2 s, here the middle.
    timers.advance(1499);
    expect(sockets).toHaveLength(1);
    timers.advance(1);
    expect(sockets).toHaveLength(2);
    last().emit('open');
    expect(JSON.parse(last().sent[0] ?? '')).toEqual({ action: 'init', overlayId: OVERLAY, resumeFrom: 42 });
    expect(storage.get(`overlay-seq:${OVERLAY}`)).toBe('42');
    expectOnlyInitAndPing(sockets);
  });

  it('treats a refused connect (a 503 at the upgrade) like a close, backing off up to 30 s', () => {
    const { timers, sockets, last } = setup(() => 0.999_999_9);
    const waits: number[] = [];
    for (let i = 0; i < 7; i++) {
      const before = sockets.length;
      // The browser reports a refused upgrade as an error, then a close.
      last().emit('error');
      last().emit('close');
      let waited = 0;
      while (sockets.length === before) {
        timers.advance(250);
        waited += 250;
      }
      waits.push(waited);
    }
    expect(waits).toEqual([2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    // Once a connection is made (an init came), the next loss starts from 1–2 s again.
    last().emit('open');
    last().receive(init);
    last().emit('close');
    timers.advance(2000);
    expect(sockets).toHaveLength(9);
    for (const socket of sockets) expect(socket.sent.length).toBeLessThanOrEqual(1);
    expectOnlyInitAndPing(sockets);
  });

  it('reconnects only once when error and close both come, and when the socket cannot even be made', () => {
    const timers = new FakeTimers();
    let made = 0;
    const conn = connectViewer(
      { overlayId: OVERLAY, relay: RELAY },
      { onMessage: () => {}, onState: () => {} },
      {
        openSocket: () => {
          made++;
          throw new SyntaxError('bad url');
        },
        timers,
        random: () => 0,
        location: { protocol: 'https:', host: 'gate.example' },
      },
    );
    expect(made).toBe(1);
    expect(timers.size).toBe(1);
    timers.advance(1000);
    expect(made).toBe(2);
    conn.stop();
    expect(timers.size).toBe(0);
  });

  it('resumes after a reload from the seq kept in sessionStorage', () => {
    storage.set(`overlay-seq:${OVERLAY}`, '99');
    const { last } = setup();
    last().emit('open');
    expect(JSON.parse(last().sent[0] ?? '')).toEqual({ action: 'init', overlayId: OVERLAY, resumeFrom: 99 });
  });

  it('stops for good when the relay says the overlay is no longer published (4403)', () => {
    const timers = new FakeTimers();
    const sockets: FakeSocket[] = [];
    const seen: string[] = [];
    connectViewer(
      { overlayId: OVERLAY, relay: RELAY },
      {
        onMessage: () => {},
        onState: (state) => seen.push(state),
        onUnpublished: () => seen.push('unpublished'),
      },
      {
        openSocket: (url) => {
          const socket = new FakeSocket(url);
          sockets.push(socket);
          return socket;
        },
        timers,
        random: () => 0.5,
        location: { protocol: 'https:', host: 'gate.example' },
      },
    );
    sockets[0]?.emit('open');
    sockets[0]?.receive(init);
    sockets[0]?.emit('close', 4403);
    expect(seen).toEqual(['open', 'closed', 'unpublished']);
    timers.advance(10 * 60_000);
    expect(sockets).toHaveLength(1);
    expect(timers.size).toBe(0);
  });

  it('drops a socket that went silent (not even a pong for over a minute) and dials again', () => {
    const { timers, sockets, last } = setup(() => 0);
    last().emit('open');
    last().receive(init);
    timers.advance(VIEWER_SILENCE_MS + VIEWER_PING_MS);
    expect(sockets[0]?.closed).toBe(true);
    timers.advance(1000);
    expect(sockets).toHaveLength(2);
    expectOnlyInitAndPing(sockets);
  });
});
