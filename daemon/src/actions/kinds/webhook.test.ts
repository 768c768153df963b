import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeActionServices, fired } from '../../../../test/support/fakes/action-services.js';
import { type FakeServer, listenLoopback, readBody } from '../../../../test/support/fakes/listen.js';
import { waitFor } from '../../../../test/support/wait.js';
import { webhook } from './webhook.js';

interface Received {
  method: string;
  url: string;
  type: string | undefined;
  body: string;
}

let server: FakeServer;
const received: Received[] = [];
let answer: (req: IncomingMessage, res: ServerResponse) => void;
/** Requests held open (a tool that does not answer), ended after each test. */
const held = new Set<ServerResponse>();

beforeAll(async () => {
  server = await listenLoopback(async (req, res) => {
    const body = await readBody(req);
    received.push({ method: req.method ?? '', url: req.url ?? '', type: req.headers['content-type'], body });
    answer(req, res);
  });
});
afterAll(() => server.close());
beforeEach(() => {
  received.length = 0;
  for (const res of held) res.destroy();
  held.clear();
  answer = (_req, res) => res.end('ok');
});

const hook = (
  path: string,
  fields: { method?: 'POST' | 'GET' | 'PUT'; headers?: Record<string, string>; body?: unknown } = {},
) =>
  fired('webhook', {
    url: `${server.url}${path}`,
    origin: server.url,
    method: fields.method ?? 'POST',
    headers: fields.headers ?? {},
    body: fields.body,
  });

describe('webhook action', () => {
  it('sends an object body as JSON, text as it is, and a GET without a body', async () => {
    const run = webhook(fakeActionServices());
    await run(hook('/json', { body: { gift: 'Rose', count: 3 } }));
    await run(hook('/text', { method: 'PUT', body: 'plain words' }));
    await run(hook('/typed', { headers: { 'content-type': 'application/vnd.x+json' }, body: { a: 1 } }));
    await run(hook('/get?x=1', { method: 'GET', body: { ignored: true } }));
    expect(received).toEqual([
      { method: 'POST', url: '/json', type: 'application/json', body: '{"gift":"Rose","count":3}' },
      { method: 'PUT', url: '/text', type: 'text/plain;charset=UTF-8', body: 'plain words' },
      { method: 'POST', url: '/typed', type: 'application/vnd.x+json', body: '{"a":1}' },
      { method: 'GET', url: '/get?x=1', type: undefined, body: '' },
    ]);
  });

  it("refuses a URL that left the rule's origin, or does not parse, and sends nothing", async () => {
    const run = webhook(fakeActionServices());
    await expect(run({ ...hook('/x'), url: 'http://127.0.0.2:9/elsewhere' })).rejects.toThrow(
      `refused: the URL with the event filled in goes to http://127.0.0.2:9, not ${server.url}`,
    );
    await expect(run({ ...hook('/x'), url: 'http://hi there.example/x' })).rejects.toThrow(
      'the URL with the event filled in is not a valid URL',
    );
    expect(received).toEqual([]);
  });

  it('fails on a status outside 2xx and does not follow a redirect', async () => {
    const run = webhook(fakeActionServices());
    answer = (req, res) => {
      res.writeHead(req.url === '/moved' ? 302 : 500, req.url === '/moved' ? { Location: '/elsewhere' } : {});
      res.end('no');
    };
    await expect(run(hook('/broken'))).rejects.toThrow(/^HTTP 500$/);
    await expect(run(hook('/moved', { method: 'GET' }))).rejects.toThrow(
      /^HTTP 302 \(redirects are not followed\)$/,
    );
    expect(received.map((r) => r.url)).toEqual(['/broken', '/moved']);
  });

  it('gives up after 5 s on the clock when the tool does not answer', async () => {
    const services = fakeActionServices();
    answer = (_req, res) => void held.add(res);
    const pending = Promise.resolve(webhook(services)(hook('/silent'))).then(
      () => 'answered',
      (err: Error) => err.message,
    );
    await waitFor(() => received.length === 1, 5000, 'the request');
    services.clock.advance(4999);
    expect(services.clock.size).toBe(1);
    services.clock.advance(1);
    expect(await pending).toBe('no answer within 5 s');
  });

  it('an address holding 32 unanswered requests gets no more until one is answered', async () => {
    const services = fakeActionServices();
    const run = webhook(services);
    answer = (_req, res) => void held.add(res);
    const open = Array.from({ length: 32 }, () => Promise.resolve(run(hook('/slow'))).catch(() => undefined));
    await waitFor(() => received.length === 32, 5000, '32 requests');
    // Turned away at once, without a request: the runner logs the reason as the action's failure.
    expect(run(hook('/slow'))).toEqual({
      refused: `dropped: 32 requests to ${server.url} are still unanswered`,
    });
    expect(received).toHaveLength(32);
    answer = (_req, res) => res.end('ok');
    for (const res of held) res.end('ok');
    await Promise.all(open);
    await run(hook('/again'));
    expect(received.at(-1)?.url).toBe('/again');
  });

  it('a request under way ends when the runner closes', async () => {
    const services = fakeActionServices();
    answer = (_req, res) => void held.add(res);
    const pending = Promise.resolve(webhook(services)(hook('/slow'))).then(
      () => 'answered',
      (err: Error) => err.message,
    );
    await waitFor(() => received.length === 1, 5000, 'the request');
    services.shutDown();
    expect(await pending).toBe('the daemon is stopping');
  });

  it('says why a tool cannot be reached, with the URL, credentials redacted', async () => {
    const closed = await listenLoopback(() => {});
    await closed.close();
    const action = { ...hook('/x'), url: `${closed.url}/x?token=abcd1234`, origin: closed.url };
    await expect(webhook(fakeActionServices())(action)).rejects.toThrow(
      `cannot reach ${closed.url}/x?token=[redacted]: ECONNREFUSED`,
    );
  });
});
