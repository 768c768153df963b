// POST /kick/chat: text checked at the edge, sent with type "user" to the member's own Kick channel, and
// Kick's answers turned into the Gatekeeper's (a 401 refreshes once, a 429 keeps its Retry-After).
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { gatekeeper, WARM_UP_TIMEOUT_MS, warmUpOneTimeStore } from './helpers/gatekeeper.js';
import {
  bearer,
  kickControl,
  kickFailure,
  kickMember,
  kickSeen,
  linkedMember,
  putKickUser,
  uniqueKickUserId,
} from './helpers/kick.js';

beforeAll(warmUpOneTimeStore, WARM_UP_TIMEOUT_MS);

function chat(token: string, body: unknown): Promise<Response> {
  return gatekeeper('/kick/chat', {
    method: 'POST',
    headers: { ...bearer(token), 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function errorOf(res: Response): Promise<{ code: string; message: string }> {
  return ((await res.json()) as { error: { code: string; message: string } }).error;
}

async function linked(label: string): Promise<{ kickId: number; token: string }> {
  const kickId = uniqueKickUserId();
  await putKickUser(kickId);
  const { token } = await linkedMember(label, kickId);
  return { kickId, token };
}

describe('POST /kick/chat', () => {
  it('sends the trimmed text as the member to their own channel (type user) and answers Kick’s message id', async () => {
    const { kickId, token } = await linked('chat-ok');
    const res = await chat(token, { content: '  hello Kick 👋  ' });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { sent: boolean; messageId?: string };
    const seen = await kickSeen(kickId);
    expect(seen.chat).toEqual([
      { message_id: answer.messageId, content: 'hello Kick 👋', type: 'user', broadcaster_user_id: kickId },
    ]);
    expect(answer).toEqual({ sent: true, messageId: seen.chat[0]?.message_id });
  });

  it('takes 500 code points (emoji count as one each) and refuses 501', async () => {
    const { kickId, token } = await linked('chat-length');
    expect((await chat(token, { content: '😀'.repeat(500) })).status).toBe(200);
    const long = await chat(token, { content: 'a'.repeat(501) });
    expect(long.status).toBe(400);
    expect((await errorOf(long)).message).toMatch(/^content: .*500/);
    expect((await kickSeen(kickId)).chat).toHaveLength(1);
  });

  it('refuses empty text, text of spaces, control characters and line breaks, a missing field and non-JSON: 400', async () => {
    const { kickId, token } = await linked('chat-invalid');
    for (const body of [
      { content: '' },
      { content: '   ' },
      { content: 'one\ntwo' },
      { content: 'bell\u0007' },
      { content: 42 },
      {},
      'not json',
    ]) {
      const res = await chat(token, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
    expect((await kickSeen(kickId)).chat).toEqual([]);
  });

  it('without a linked Kick account: 409 conflict that says to connect Kick; without a licence: 401', async () => {
    const { token } = await kickMember('chat-unlinked');
    const res = await chat(token, { content: 'hello' });
    expect(res.status).toBe(409);
    const error = await errorOf(res);
    expect(error.code).toBe('conflict');
    expect(error.message).toMatch(/Kick is not connected/);
    const anonymous = await gatekeeper('/kick/chat', { method: 'POST', body: '{"content":"hi"}' });
    expect(anonymous.status).toBe(401);
  });

  it('a 401 from Kick refreshes the tokens once and sends again', async () => {
    const { kickId, token } = await linked('chat-401');
    await kickControl(`/users/${kickId}/expire`, { method: 'POST' });
    const res = await chat(token, { content: 'still here' });
    expect(res.status).toBe(200);
    const seen = await kickSeen(kickId);
    expect(seen.refresh_grants).toBe(1);
    expect(seen.chat.map((m) => m.content)).toEqual(['still here']);
  });

  it('Kick answering 401 again after the refresh: 409 conflict, connect Kick again', async () => {
    const { kickId, token } = await linked('chat-401-twice');
    await kickFailure(kickId, { endpoint: 'chat', status: 401, times: 2 });
    const res = await chat(token, { content: 'nope' });
    expect(res.status).toBe(409);
    expect((await errorOf(res)).message).toMatch(/connect Kick again/);
    const seen = await kickSeen(kickId);
    expect(seen.refresh_grants).toBe(1);
    expect(seen.chat).toEqual([]);
  });

  it('Kick’s 429 is a 429 rate_limited with Kick’s Retry-After (30 s when it gave none)', async () => {
    const { kickId, token } = await linked('chat-429');
    await kickFailure(kickId, { endpoint: 'chat', status: 429, retry_after: 12 });
    const limited = await chat(token, { content: 'too fast' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('Retry-After')).toBe('12');
    expect((await errorOf(limited)).code).toBe('rate_limited');

    await kickFailure(kickId, { endpoint: 'chat', status: 429 });
    const unsaid = await chat(token, { content: 'too fast' });
    expect(unsaid.status).toBe(429);
    expect(unsaid.headers.get('Retry-After')).toBe('30');
    expect((await kickSeen(kickId)).chat).toEqual([]);
  });

  it('Kick failing otherwise is a 502 upstream_error that names Kick', async () => {
    const { kickId, token } = await linked('chat-5xx');
    await kickFailure(kickId, { endpoint: 'chat', status: 503 });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const res = await chat(token, { content: 'hello' });
    errors.mockRestore();
    expect(res.status).toBe(502);
    const error = await errorOf(res);
    expect(error.code).toBe('upstream_error');
    expect(error.message).toMatch(/Kick/);
  });

  it('is not rate limited per address like the account routes (the daemon paces chat itself)', async () => {
    const { kickId, token } = await linked('chat-many');
    const ip = '10.250.0.1';
    for (let i = 0; i < 35; i++) {
      const res = await gatekeeper('/kick/chat', {
        method: 'POST',
        ip,
        headers: { ...bearer(token), 'Content-Type': 'application/json' },
        body: JSON.stringify({ content: `line ${i}` }),
      });
      expect(res.status).toBe(200);
    }
    expect((await kickSeen(kickId)).chat).toHaveLength(35);
  });
});
