import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as v from 'valibot';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeTimers } from '../../../test/support/fake-timers.js';
import { DAEMON_ERROR_CODES } from '../errors.js';
import { FetchError, fetchJson, redact } from './fetch-json.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

let server: Server;
let base: string;
let handler: Handler;
const requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
/** Answers never sent (a server that does not answer), ended after each test. */
const hanging = new Set<ServerResponse>();

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests.length = 0;
  for (const res of hanging) res.destroy();
  hanging.clear();
});

function answer(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, _body, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

/** The FetchError a call rejects with. */
async function failure(promise: Promise<unknown>): Promise<FetchError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FetchError);
  return err as FetchError;
}

const Users = v.object({ data: v.array(v.object({ id: v.string(), login: v.string() })) });

describe('fetchJson', () => {
  it('resolves with the answer checked by the schema (unknown keys dropped)', async () => {
    handler = answer(200, { data: [{ id: '1', login: 'ann', extra: true }], more: 1 });
    const got = await fetchJson(`${base}/users`, { schema: Users });
    expect(got.status).toBe(200);
    expect(got.value).toEqual({ data: [{ id: '1', login: 'ann' }] });
    expect(requests[0]).toMatchObject({ method: 'GET', url: '/users' });
    expect(requests[0]?.headers.accept).toBe('application/json');
  });

  it('sends JSON with its content type, and a form as a form', async () => {
    handler = answer(204, '');
    await fetchJson(`${base}/hook`, { json: { said: 'hi' } });
    await fetchJson(`${base}/token`, { form: { grant_type: 'refresh_token', a: 'b c' } });
    expect(requests[0]).toMatchObject({ method: 'POST', body: '{"said":"hi"}' });
    expect(requests[0]?.headers['content-type']).toBe('application/json');
    expect(requests[1]).toMatchObject({ method: 'POST', body: 'grant_type=refresh_token&a=b+c' });
    expect(requests[1]?.headers['content-type']).toBe('application/x-www-form-urlencoded;charset=UTF-8');
  });

  it('names the field at fault when the answer is not the documented shape', async () => {
    handler = answer(200, { data: [{ id: 7, login: 'ann' }] });
    const err = await failure(fetchJson(`${base}/users`, { schema: Users, service: 'Twitch' }));
    expect(err.code).toBe('bad_response');
    expect(err.field).toBe('data.0.id');
    expect(err.message).toMatch(/^Twitch's answer is not understood: data\.0\.id: /);
  });

  it('says an answer that is not JSON is not JSON', async () => {
    handler = answer(200, '<html>proxy</html>');
    const err = await failure(fetchJson(`${base}/users`, { schema: Users }));
    expect(err.code).toBe('bad_response');
    expect(err.reason).toBe('the answer is not JSON');
    expect(err.field).toBeUndefined();
  });

  it('maps each error status to one code, quoting the answer’s own reason', async () => {
    const cases: [number, unknown, string][] = [
      [400, { message: 'authorization_pending' }, 'rejected'],
      [401, { error: 'Unauthorized', status: 401, message: 'Invalid OAuth token' }, 'unauthorized'],
      [403, { error: { code: 403, message: 'quota' } }, 'forbidden'],
      [404, '', 'not_found'],
      [409, { message: 'subscription already exists' }, 'conflict'],
      [429, '', 'rate_limited'],
      [500, 'oops', 'upstream_error'],
      [503, '', 'upstream_error'],
    ];
    for (const [status, body, code] of cases) {
      handler = answer(status, body);
      const err = await failure(fetchJson(`${base}/x`, { schema: v.unknown(), service: 'the API' }));
      expect([err.code, err.status]).toEqual([code, status]);
      if (typeof body === 'object') expect(err.body).toEqual(body);
    }
    handler = answer(401, { message: 'Invalid OAuth token' });
    const err = await failure(fetchJson(`${base}/x`, { service: "Twitch's API" }));
    expect(err.message).toBe("Twitch's API answered HTTP 401: Invalid OAuth token");
    expect(err.reason).toBe('HTTP 401: Invalid OAuth token');
    expect(DAEMON_ERROR_CODES).toContain(err.code);
  });

  it('reads the wait a 429 asks for from Retry-After (seconds or a date)', async () => {
    handler = answer(429, '', { 'Retry-After': '7' });
    expect((await failure(fetchJson(`${base}/x`))).retryAfterMs).toBe(7000);
    handler = answer(429, '', { 'Retry-After': new Date(Date.now() + 60_000).toUTCString() });
    const fromDate = (await failure(fetchJson(`${base}/x`))).retryAfterMs ?? 0;
    expect(fromDate).toBeGreaterThan(55_000);
    expect(fromDate).toBeLessThanOrEqual(60_000);
    handler = answer(429, '');
    expect((await failure(fetchJson(`${base}/x`))).retryAfterMs).toBeUndefined();
  });

  it('does not follow a redirect', async () => {
    handler = (req, _body, res) => {
      if (req.url === '/moved') {
        res.writeHead(302, { Location: `${base}/elsewhere` });
        res.end();
      } else answer(200, {})(req, '', res);
    };
    const err = await failure(fetchJson(`${base}/moved`, { schema: v.unknown() }));
    expect(err.code).toBe('redirected');
    expect(err.reason).toBe('HTTP 302 (redirects are not followed)');
    expect(requests.map((r) => r.url)).toEqual(['/moved']);
  });

  it('gives up after 5 s by default, and after the time a call sets', async () => {
    handler = (_req, _body, res) => void hanging.add(res);
    const timers = new FakeTimers();
    const pending = failure(fetchJson(`${base}/slow`, { schema: v.unknown(), timers, service: 'the hook' }));
    await until(() => requests.length === 1);
    timers.advance(4999);
    expect(timers.size).toBe(1);
    timers.advance(1);
    const err = await pending;
    expect(err.code).toBe('timeout');
    expect(err.message).toBe('the hook gave no answer within 5 s');
    expect(timers.size).toBe(0);

    const quick = failure(fetchJson(`${base}/slow`, { timers, timeoutMs: 2000 }));
    await until(() => requests.length === 2);
    timers.advance(2000);
    expect((await quick).reason).toBe('no answer within 2 s');
  });

  it('clears its timer when the answer came in time', async () => {
    handler = answer(200, {});
    const timers = new FakeTimers();
    await fetchJson(`${base}/x`, { schema: v.unknown(), timers });
    expect(timers.size).toBe(0);
  });

  it('says what the network said when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const err = await failure(fetchJson(`http://127.0.0.1:${port}/x`));
    expect(err.code).toBe('unreachable');
    expect(err.reason).toBe('ECONNREFUSED');
    expect(err.message).toBe(`cannot reach http://127.0.0.1:${port}: ECONNREFUSED`);
  });

  it('fails with aborted, giving the caller’s reason, when the caller cancels', async () => {
    handler = (_req, _body, res) => void hanging.add(res);
    const controller = new AbortController();
    const pending = failure(fetchJson(`${base}/x`, { signal: controller.signal, timers: new FakeTimers() }));
    await until(() => requests.length === 1);
    controller.abort(new Error('the daemon is stopping'));
    const err = await pending;
    expect(err.code).toBe('aborted');
    expect(err.reason).toBe('the daemon is stopping');
  });

  it('refuses an answer larger than its bound', async () => {
    handler = answer(200, { big: 'x'.repeat(2000) });
    const err = await failure(fetchJson(`${base}/x`, { schema: v.unknown(), maxBytes: 1000 }));
    expect(err.code).toBe('bad_response');
    expect(err.reason).toBe('the answer is larger than 1000 bytes');
  });

  it('redacts the caller’s secrets and credential query values from every message', async () => {
    const token = 'tok_S3cr3t/+=value';
    handler = answer(401, {
      message: `token ${token} is invalid, key=AIzaLeaked and ${encodeURIComponent(token)}`,
    });
    const refused = await failure(
      fetchJson(`${base}/x?key=AIzaOwn`, { secrets: [token], service: 'the API' }),
    );
    expect(refused.message).toBe(
      'the API answered HTTP 401: token [redacted] is invalid, key=[redacted] and [redacted]',
    );
    expect(refused.reason).not.toContain('S3cr3t');

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = await failure(
      fetchJson(`http://127.0.0.1:${port}/hook?key=AIzaOwn&client_secret=abcd1234`, {
        service: `http://127.0.0.1:${port}/hook?key=AIzaOwn&client_secret=abcd1234`,
      }),
    );
    expect(unreachable.message).toBe(
      `cannot reach http://127.0.0.1:${port}/hook?key=[redacted]&client_secret=[redacted]: ECONNREFUSED`,
    );
  });

  it('redacts the values of credential headers without being told', async () => {
    handler = answer(403, { message: 'token abcd-efgh-1234 may not post here (key k-777777)' });
    const err = await failure(
      fetchJson(`${base}/hook`, {
        headers: { Authorization: 'Bearer abcd-efgh-1234', 'X-Api-Key': 'k-777777', 'X-Tool': 'overlay' },
        json: {},
      }),
    );
    expect(err.reason).toBe('HTTP 403: token [redacted] may not post here (key [redacted])');
    expect(requests[0]?.headers.authorization).toBe('Bearer abcd-efgh-1234');
  });
});

describe('redact', () => {
  it('replaces each secret, its URL-encoded form and credential query values', () => {
    expect(redact('a b+c/d a%20b%2Bc%2Fd a+b%2Bc%2Fd', ['a b+c/d'])).toBe('[redacted] [redacted] [redacted]');
    expect(redact('https://x.test/v3/videos?id=1&key=AIza123&token=t#code=c', [])).toBe(
      'https://x.test/v3/videos?id=1&key=[redacted]&token=[redacted]#code=[redacted]',
    );
  });

  it('leaves a message alone when no secret is in it, and ignores secrets too short to be one', () => {
    expect(redact('HTTP 500', ['', undefined, 'ab'])).toBe('HTTP 500');
  });
});

/** Waits for a condition the server sees (the request arrived); no fixed sleep. */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  expect(condition()).toBe(true);
}
