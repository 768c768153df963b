// A viewer's text that is not well-formed (a lone surrogate, kept as the platform sent it) is mended at
// ingest: GET /api/events stays strict JSON that every reader takes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
beforeAll(async () => {
  daemon = await startTestDaemon();
});
afterAll(() => daemon?.stop());

describe('a lone surrogate in a viewer text', () => {
  it('reaches the history as U+FFFD, from the control API and from a live source alike', async () => {
    const posted = await api(
      daemon,
      'POST',
      '/api/events',
      // As a client sends it: the escape of a lone surrogate is valid JSON text.
      '{"type":"chat","user":{"uniqueId":"odd","nickname":"Odd\\udc00"},"data":{"comment":"half \\ud800 of it"}}',
    );
    expect(posted.status).toBe(202);
    daemon.ingest({
      type: 'chat',
      platform: 'twitch',
      user: { uniqueId: 'twitcher', nickname: 'Twitcher' },
      data: { comment: 'cut \ud83d' },
    });

    const res = await api(daemon, 'GET', '/api/events?limit=10');
    expect(res.status).toBe(200);
    const raw = new Uint8Array(await res.arrayBuffer());
    // Strict UTF-8, and no escape of a lone surrogate anywhere (jq refuses the whole answer for one).
    const text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
    expect(text).not.toMatch(/\\ud[89a-f][0-9a-f]{2}/i);
    const page = JSON.parse(text) as {
      events: { event: { user: { nickname: string }; data: { comment: string } } }[];
    };
    const comments = page.events.map((e) => e.event.data.comment);
    expect(comments).toEqual(expect.arrayContaining(['half \ufffd of it', 'cut \ufffd']));
    expect(page.events.map((e) => e.event.user.nickname)).toContain('Odd\ufffd');
  });
});
