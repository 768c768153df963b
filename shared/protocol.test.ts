import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, RemoteConfig } from './config.js';
import {
  ClientInit,
  ERROR_STATUS,
  ErrorBody,
  ExchangeResponse,
  encodeClientMessage,
  encodeServerMessage,
  errorBody,
  Health,
  Overlay,
  OverlayCommandInput,
  type ParseResult,
  ProvisionRequest,
  ProvisionResponse,
  parseClientMessage,
  parseJsonWith,
  parseServerMessage,
  parseWith,
  type ServerMessage,
  ShowAlertPayload,
  STREAM_EVENT_TYPES,
  StreamEvent,
  TunnelStatus,
  ValidateResponse,
  Widget,
} from './protocol/index.js';

const OVERLAY_ID = '0b7c5b8e-3f4a-4c1e-9d2a-6f1e2d3c4b5a';
const user = { uniqueId: 'alice', nickname: 'Alice' };

function rejected<T>(result: ParseResult<T>): string {
  if (result.ok) throw new Error(`expected a rejection, got ${JSON.stringify(result.value)}`);
  return result.error;
}

describe('client init message', () => {
  const init = { action: 'init', overlayId: OVERLAY_ID, token: 'tok_123' };

  it('accepts a well-formed init', () => {
    expect(parseClientMessage(JSON.stringify(init))).toEqual({ ok: true, value: init });
  });

  it('ignores unknown fields', () => {
    const result = parseClientMessage(JSON.stringify({ ...init, extra: 1 }));
    expect(result).toEqual({ ok: true, value: init });
  });

  it('rejects non-JSON with a reason, without throwing', () => {
    expect(rejected(parseClientMessage('{not json'))).toMatch(/JSON/);
  });

  it('rejects a wrong action', () => {
    expect(rejected(parseClientMessage(JSON.stringify({ ...init, action: 'subscribe' })))).toMatch(/action/);
  });

  it('rejects a missing token and names the field', () => {
    const { token: _token, ...noToken } = init;
    const result = parseClientMessage(JSON.stringify(noToken));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.field).toBe('token');
  });

  it('rejects a mistyped overlayId', () => {
    expect(rejected(parseClientMessage(JSON.stringify({ ...init, overlayId: 42 })))).toMatch(/overlayId/);
    expect(rejected(parseClientMessage(JSON.stringify({ ...init, overlayId: 'not-a-uuid' })))).toMatch(
      /UUID/,
    );
  });

  it('rejects JSON that is not an object', () => {
    for (const text of ['null', '[]', '"init"', '42']) expect(parseClientMessage(text).ok).toBe(false);
  });

  it('round-trips through the typed encoder', () => {
    const parsed = parseWith(ClientInit, init);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parseClientMessage(encodeClientMessage(parsed.value))).toEqual({ ok: true, value: init });
  });
});

describe('stream events', () => {
  const samples = {
    gift: { giftName: 'Rose', repeatCount: 99, diamondCount: 1 },
    follow: {},
    like: { likeCount: 15, totalLikeCount: 1200 },
    chat: { comment: 'hello!' },
    share: {},
    subscribe: {},
    viewer: { viewerCount: 321 },
  } as const;

  it('accepts all seven types', () => {
    for (const type of STREAM_EVENT_TYPES) {
      const result = parseWith(StreamEvent, { type, platform: 'api', user, data: samples[type] });
      expect(result, type).toEqual({ ok: true, value: { type, platform: 'api', user, data: samples[type] } });
    }
  });

  it('forwards unknown data fields as given but drops unknown top-level fields', () => {
    const result = parseWith(StreamEvent, {
      type: 'gift',
      platform: 'api',
      user,
      data: { giftName: 'Lion', repeatCount: 1, giftPictureUrl: 'x.png' },
      extra: true,
    });
    expect(result).toEqual({
      ok: true,
      value: {
        type: 'gift',
        platform: 'api',
        user,
        data: { giftName: 'Lion', repeatCount: 1, giftPictureUrl: 'x.png' },
      },
    });
  });

  it('rejects an unknown event type', () => {
    expect(parseWith(StreamEvent, { type: 'raid', user, data: {} }).ok).toBe(false);
  });

  it('rejects a gift without giftName or with a fractional repeatCount, naming the field', () => {
    const noName = parseWith(StreamEvent, { type: 'gift', platform: 'api', user, data: { repeatCount: 1 } });
    expect(!noName.ok && noName.field).toBe('data.giftName');
    const fractional = parseWith(StreamEvent, {
      type: 'gift',
      platform: 'api',
      user,
      data: { giftName: 'Rose', repeatCount: 1.5 },
    });
    expect(!fractional.ok && fractional.field).toBe('data.repeatCount');
  });

  it('rejects a user without uniqueId', () => {
    const result = parseWith(StreamEvent, {
      type: 'follow',
      platform: 'api',
      user: { nickname: 'x' },
      data: {},
    });
    expect(!result.ok && result.field).toBe('user.uniqueId');
  });
});

describe('widgets and overlays', () => {
  const text = { id: 'w1', type: 'text', x: 10, y: 20, content: 'Hi' } as const;

  it('accepts a text widget and fills defaults of other kinds', () => {
    expect(parseWith(Widget, text)).toEqual({ ok: true, value: text });
    const goal = parseWith(Widget, { id: 'g', type: 'goal', x: 0, y: 0, source: 'likes', target: 1000 });
    expect(goal.ok && goal.value).toMatchObject({ current: 0, title: '' });
  });

  it('rejects a widget of an unknown kind or without a position', () => {
    expect(parseWith(Widget, { ...text, type: 'hologram' }).ok).toBe(false);
    const { x: _x, ...noX } = text;
    const result = parseWith(Widget, noX);
    expect(!result.ok && result.field).toBe('x');
  });

  it('rejects media paths that climb out of media/', () => {
    for (const src of ['../secret.png', 'a/../../b.png', '/etc/passwd']) {
      expect(parseWith(Widget, { id: 'i', type: 'image', x: 0, y: 0, src }).ok, src).toBe(false);
    }
  });

  it('rejects duplicate widget ids in an overlay', () => {
    const overlay = { id: OVERLAY_ID, name: 'Main', width: 1920, height: 1080, widgets: [text, text] };
    expect(rejected(parseWith(Overlay, overlay))).toMatch(/unique/);
  });
});

describe('server messages', () => {
  const overlay = { name: 'Main', width: 1920, height: 1080 };
  const widgets = [{ id: 'w1', type: 'text' as const, x: 1, y: 2, content: 'Hello' }];
  const messages: ServerMessage[] = [
    { type: 'init', overlay, widgets },
    { type: 'overlay-update', overlayId: OVERLAY_ID, overlay, widgets },
    {
      type: 'stream-event',
      event: { type: 'gift', platform: 'api', user, data: { giftName: 'Rose', repeatCount: 5 } },
    },
    {
      type: 'overlay-command',
      command: 'show-alert',
      widgetId: 'alert',
      payload: { text: 'Alice sent 5 × Rose', duration: 4000 },
    },
  ];

  it('round-trips every server message through encode and parse', () => {
    for (const message of messages) {
      expect(parseServerMessage(encodeServerMessage(message)), message.type).toEqual({
        ok: true,
        value: message,
      });
    }
  });

  it('rejects an overlay-update without overlayId and an unknown type', () => {
    expect(parseServerMessage(JSON.stringify({ type: 'overlay-update', overlay, widgets })).ok).toBe(false);
    expect(parseServerMessage(JSON.stringify({ type: 'hello' })).ok).toBe(false);
  });

  it('validates the show-alert payload', () => {
    expect(parseWith(ShowAlertPayload, { text: 'hi', duration: 3000 }).ok).toBe(true);
    expect(parseWith(ShowAlertPayload, { text: 'hi', duration: '3s' }).ok).toBe(false);
    expect(parseWith(ShowAlertPayload, { duration: 3000 }).ok).toBe(false);
  });

  it('defaults a command payload to an empty object', () => {
    expect(parseWith(OverlayCommandInput, { command: 'reset', widgetId: 'g' })).toEqual({
      ok: true,
      value: { command: 'reset', widgetId: 'g', payload: {} },
    });
  });
});

describe('Gatekeeper bodies', () => {
  it('accepts the documented shapes', () => {
    expect(parseWith(Health, { status: 'ok', version: '1.2.3' }).ok).toBe(true);
    expect(parseWith(ExchangeResponse, { token: 'a.b.c', tier: 'premium' }).ok).toBe(true);
    expect(
      parseWith(ValidateResponse, { token: 'a.b.c', tier: 'free', expires_at: '2026-11-28T10:00:00.000Z' })
        .ok,
    ).toBe(true);
    expect(parseWith(ProvisionRequest, { user_id: '12345' }).ok).toBe(true);
    expect(
      parseWith(ProvisionResponse, {
        tunnel_id: OVERLAY_ID,
        tunnel_token: 'eyJh',
        public_url: 'https://o-abc.example.com',
        subdomain: 'o-abc',
      }).ok,
    ).toBe(true);
    expect(
      parseWith(TunnelStatus, {
        tunnel_id: OVERLAY_ID,
        subdomain: 'o-abc',
        public_url: 'https://o-abc.example.com',
        active: false,
        state: 'provisioned',
        connections: 0,
        created_at: '2026-11-21T06:00:00.000Z',
      }).ok,
    ).toBe(true);
  });

  it('rejects an unknown tier, a non-dotted version and an unknown tunnel state', () => {
    expect(parseWith(ExchangeResponse, { token: 't', tier: 'gold' }).ok).toBe(false);
    expect(parseWith(Health, { status: 'ok', version: 'v1' }).ok).toBe(false);
    expect(parseJsonWith(TunnelStatus, '{"state":"deleted"}').ok).toBe(false);
  });

  it('builds the common error body with a status for every code', () => {
    const body = errorBody('premium_required', 'Premium only');
    expect(parseWith(ErrorBody, body)).toEqual({ ok: true, value: body });
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      expect(code).toMatch(/^[a-z_]+$/);
      expect(status).toBeGreaterThanOrEqual(400);
    }
  });

  it('ships a default remote config that validates', () => {
    expect(parseWith(RemoteConfig, DEFAULT_CONFIG).ok).toBe(true);
  });
});
