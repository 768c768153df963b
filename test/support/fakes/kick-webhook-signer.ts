// The signing half of the stand-in for Kick's webhook sender, on WebCrypto alone so it runs in Node and
// inside workerd: deliveries signed as Kick signs them (RSA PKCS#1 v1.5 with SHA-256 over
// `<message id>.<timestamp>.<raw body>`, base64 in `Kick-Event-Signature`), and sample bodies of each event
// type the Gatekeeper maps, in the shapes of Kick's public developer documentation. In Node, use
// kick-webhooks.ts (which also makes key pairs with node:crypto).
import type { KickEventType } from '../../../shared/protocol/kick.js';

export interface KickDelivery {
  headers: Record<string, string>;
  body: string;
}

export interface DeliveryOptions {
  /** `Kick-Event-Message-Id` (default: a fresh ULID-like id). */
  messageId?: string;
  /** `Kick-Event-Message-Timestamp`: a Date or an RFC 3339 text (default: now). */
  timestamp?: Date | string;
  /** `Kick-Event-Subscription-Id` (default: a fixed id). */
  subscriptionId?: string;
  /** A raw body to send instead of `JSON.stringify(payload)` (signed as given). */
  rawBody?: string;
}

export interface KickWebhookSender {
  publicKeyPem: string;
  privateKeyPem: string;
  signedDelivery(type: string, payload: unknown, options?: DeliveryOptions): Promise<KickDelivery>;
  /** POSTs a signed delivery to `url` (a Gatekeeper's `/kick/webhook`), as Kick does. */
  send(url: string, type: string, payload: unknown, options?: DeliveryOptions): Promise<Response>;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID-shaped id (26 Crockford base32 characters), as Kick's message ids are. */
export function ulidLike(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(26));
  return Array.from(bytes, (b) => CROCKFORD[b % 32]).join('');
}

function pemBytes(pem: string): Uint8Array<ArrayBuffer> {
  const b64 = pem.replace(/-----(BEGIN|END) [A-Z ]+-----/g, '').replace(/\s+/g, '');
  const raw = atob(b64);
  const bytes = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

function base64(bytes: ArrayBuffer): string {
  let raw = '';
  for (const b of new Uint8Array(bytes)) raw += String.fromCharCode(b);
  return btoa(raw);
}

/** A webhook sender signing with the given key pair (PEM: SPKI public, PKCS#8 private). */
export function kickWebhookSenderFromKeys(keys: {
  publicKeyPem: string;
  privateKeyPem: string;
}): KickWebhookSender {
  let signingKey: Promise<CryptoKey> | undefined;
  const key = () => {
    signingKey ??= crypto.subtle.importKey(
      'pkcs8',
      pemBytes(keys.privateKeyPem),
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    return signingKey;
  };
  const sender: KickWebhookSender = {
    ...keys,
    async signedDelivery(type, payload, options = {}) {
      const messageId = options.messageId ?? ulidLike();
      const at = options.timestamp ?? new Date();
      const timestamp = typeof at === 'string' ? at : at.toISOString().replace(/\.\d{3}Z$/, 'Z');
      const body = options.rawBody ?? JSON.stringify(payload);
      const signed = new TextEncoder().encode(`${messageId}.${timestamp}.${body}`);
      const signature = await crypto.subtle.sign('RSASSA-PKCS1-v1_5', await key(), signed);
      return {
        headers: {
          'Content-Type': 'application/json',
          'Kick-Event-Message-Id': messageId,
          'Kick-Event-Subscription-Id': options.subscriptionId ?? '01JH0000000000000000000SUB',
          'Kick-Event-Signature': base64(signature),
          'Kick-Event-Message-Timestamp': timestamp,
          'Kick-Event-Type': type,
          'Kick-Event-Version': '1',
        },
        body,
      };
    },
    async send(url, type, payload, options) {
      const { headers, body } = await sender.signedDelivery(type, payload, options);
      return fetch(url, { method: 'POST', headers, body });
    },
  };
  return sender;
}

/** A sender with a fresh key pair made with WebCrypto (works inside workerd too). */
export async function newKickWebhookSender(): Promise<KickWebhookSender> {
  const pair = (await crypto.subtle.generateKey(
    {
      name: 'RSASSA-PKCS1-v1_5',
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: 'SHA-256',
    },
    true,
    ['sign', 'verify'],
  )) as CryptoKeyPair;
  const pem = (label: string, der: ArrayBuffer) =>
    `-----BEGIN ${label}-----\n${base64(der).replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END ${label}-----\n`;
  return kickWebhookSenderFromKeys({
    publicKeyPem: pem('PUBLIC KEY', (await crypto.subtle.exportKey('spki', pair.publicKey)) as ArrayBuffer),
    privateKeyPem: pem(
      'PRIVATE KEY',
      (await crypto.subtle.exportKey('pkcs8', pair.privateKey)) as ArrayBuffer,
    ),
  });
}

// --- Sample bodies in Kick's shapes ----------------------------------------------------------------

export interface SampleUser {
  user_id: number;
  username: string;
  channel_slug: string;
}

const user = (u: SampleUser, extra: Record<string, unknown> = {}) => ({
  is_anonymous: false,
  user_id: u.user_id,
  username: u.username,
  is_verified: false,
  profile_picture: `https://files.kick.test/images/user/${u.user_id}/profile_image/conversion/default.webp`,
  channel_slug: u.channel_slug,
  identity: null,
  ...extra,
});

/** The broadcaster of the samples unless one is given. */
export const SAMPLE_BROADCASTER: SampleUser = {
  user_id: 123456789,
  username: 'Streamer_Name',
  channel_slug: 'streamer-name',
};
const VIEWER: SampleUser = { user_id: 987654321, username: 'Viewer_One', channel_slug: 'viewer-one' };

const broadcasterOf = (b: SampleUser) => user(b, { is_verified: true });

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * A time of Kick's payloads (RFC 3339, seconds, UTC), `offsetMs` from now: a sample happens as it is
 * made, so a receiver that judges events by when they happened takes it as live.
 */
const kickTime = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A sample body of each mapped type (and one that is not mapped), for `broadcaster`. */
export const kickSamples = {
  chat(b: SampleUser = SAMPLE_BROADCASTER, over: { messageId?: string; content?: string } = {}) {
    return {
      message_id: over.messageId ?? '01JH5XJ4Z1K0T6V8P3N9QWERTY',
      replies_to: null,
      broadcaster: broadcasterOf(b),
      sender: user(VIEWER, {
        identity: {
          username_color: '#FF5733',
          badges: [{ text: 'Subscriber', type: 'subscriber', count: 3 }],
        },
      }),
      content: over.content ?? 'Hello [emote:37226:KEKW]',
      emotes: [{ emote_id: '37226', positions: [{ s: 6, e: 23 }] }],
      created_at: kickTime(),
    };
  },
  follow(b: SampleUser = SAMPLE_BROADCASTER) {
    return { broadcaster: broadcasterOf(b), follower: user(VIEWER) };
  },
  subscriptionNew(b: SampleUser = SAMPLE_BROADCASTER) {
    return {
      broadcaster: broadcasterOf(b),
      subscriber: user(VIEWER),
      duration: 1,
      created_at: kickTime(),
      expires_at: kickTime(30 * DAY_MS),
    };
  },
  subscriptionRenewal(b: SampleUser = SAMPLE_BROADCASTER, months = 3) {
    return {
      broadcaster: broadcasterOf(b),
      subscriber: user(VIEWER),
      duration: months,
      created_at: kickTime(),
      expires_at: kickTime(30 * DAY_MS),
    };
  },
  subscriptionGifts(
    b: SampleUser = SAMPLE_BROADCASTER,
    options: { anonymous?: boolean; giftees?: number } = {},
  ) {
    const gifter = options.anonymous
      ? {
          is_anonymous: true,
          user_id: null,
          username: null,
          is_verified: null,
          profile_picture: null,
          channel_slug: null,
          identity: null,
        }
      : user(VIEWER);
    const giftees = Array.from({ length: options.giftees ?? 2 }, (_, i) =>
      user({ user_id: 561654654 + i, username: `Giftee_${i + 1}`, channel_slug: `giftee-${i + 1}` }),
    );
    return {
      broadcaster: broadcasterOf(b),
      gifter,
      giftees,
      created_at: kickTime(),
      expires_at: kickTime(30 * DAY_MS),
    };
  },
  kicksGifted(b: SampleUser = SAMPLE_BROADCASTER, amount = 500) {
    return {
      broadcaster: {
        user_id: b.user_id,
        username: b.username,
        is_verified: true,
        profile_picture: '',
        channel_slug: b.channel_slug,
      },
      sender: {
        user_id: VIEWER.user_id,
        username: VIEWER.username,
        is_verified: false,
        profile_picture: '',
        channel_slug: VIEWER.channel_slug,
      },
      gift: {
        amount,
        name: 'Rage Quit',
        type: 'LEVEL_UP',
        tier: 'MID',
        message: 'w',
        pinned_time_seconds: 600,
      },
      // Kick gives this one with milliseconds.
      created_at: new Date().toISOString(),
    };
  },
  livestreamStatus(b: SampleUser = SAMPLE_BROADCASTER, live = true) {
    return {
      broadcaster: broadcasterOf(b),
      is_live: live,
      title: 'Stream Title',
      started_at: kickTime(live ? 0 : -4 * 60 * 60 * 1000),
      ended_at: live ? null : kickTime(),
    };
  },
  /** A type the Gatekeeper does not map. */
  metadataUpdated(b: SampleUser = SAMPLE_BROADCASTER) {
    return {
      broadcaster: broadcasterOf(b),
      metadata: { title: 'New title', language: 'en', has_mature_content: false, category: null },
    };
  },
} as const;

/** One sample delivery per mapped type: its type and body. */
export function sampleOfEachType(b: SampleUser = SAMPLE_BROADCASTER): [KickEventType, unknown][] {
  return [
    ['chat.message.sent', kickSamples.chat(b)],
    ['channel.followed', kickSamples.follow(b)],
    ['channel.subscription.new', kickSamples.subscriptionNew(b)],
    ['channel.subscription.renewal', kickSamples.subscriptionRenewal(b)],
    ['channel.subscription.gifts', kickSamples.subscriptionGifts(b)],
    ['kicks.gifted', kickSamples.kicksGifted(b)],
    ['livestream.status.updated', kickSamples.livestreamStatus(b)],
  ];
}
