import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, ControlApi, relayEntries } from './api.js';

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

let sent: Sent[];

/** The daemon, stood in for by `fetch`: each request is recorded and answered by `answer`. */
function daemon(answer: (request: Sent) => Response | Promise<Response>): void {
  sent = [];
  vi.stubGlobal('fetch', async (url: string, init: RequestInit = {}) => {
    const request = {
      url,
      method: init.method ?? 'GET',
      headers: { ...(init.headers as Record<string, string>) },
      body: typeof init.body === 'string' ? JSON.parse(init.body) : init.body,
    };
    sent.push(request);
    return answer(request);
  });
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });

afterEach(() => {
  vi.unstubAllGlobals();
});

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('the control API client', () => {
  it('sends the admin key as a Bearer header and parses the answer with the shared schema', async () => {
    daemon(() => json(200, [{ name: 'camera', running: true, waiting: 2 }]));
    const api = new ControlApi('admin-key');
    expect(await api.actionQueues()).toEqual([{ name: 'camera', running: true, waiting: 2 }]);
    expect(sent[0]).toMatchObject({
      url: '/api/actions/queues',
      method: 'GET',
      headers: { Authorization: 'Bearer admin-key' },
    });
  });

  it('turns a refusal into an ApiError with its status, code, message and the field it names', async () => {
    daemon(() =>
      json(400, { error: { code: 'bad_request', message: '0.actions.0.widgetId: must not be empty' } }),
    );
    const error = await refusal(new ControlApi('k').saveRules([]));
    expect(error).toMatchObject({
      status: 400,
      code: 'bad_request',
      message: '0.actions.0.widgetId: must not be empty',
      field: '0.actions.0.widgetId',
    });
  });

  it('names no field when the message has none', async () => {
    daemon(() => json(409, { error: { code: 'conflict', message: 'The overlay changed since.' } }));
    const error = await refusal(new ControlApi('k').deleteOverlay('x'));
    expect(error).toMatchObject({ status: 409, code: 'conflict', field: undefined });
  });

  it('a refusal without the error body is named by its HTTP status', async () => {
    daemon(() => new Response('<html>Bad Gateway</html>', { status: 502, statusText: 'Bad Gateway' }));
    const error = await refusal(new ControlApi('k').status());
    expect(error).toMatchObject({ status: 502, code: 'http_502', message: '502 Bad Gateway' });
  });

  it('tells the shell when the key is refused (401)', async () => {
    daemon(() => json(401, { error: { code: 'unauthorized', message: 'Wrong admin key.' } }));
    const api = new ControlApi('wrong');
    const told: ApiError[] = [];
    api.onUnauthorized = (e) => told.push(e);
    const error = await refusal(api.listOverlays());
    expect(told).toEqual([error]);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('says the daemon is not reachable when the request fails (status 0)', async () => {
    daemon(() => {
      throw new TypeError('fetch failed');
    });
    const error = await refusal(new ControlApi('k').clients());
    expect(error).toMatchObject({ status: 0, code: 'network' });
    expect(error.message).toContain('not reachable');
  });

  it('refuses an answer that does not match the schema, naming the path', async () => {
    daemon(() => json(200, [{ name: 'camera', running: 'yes', waiting: -1 }]));
    const error = await refusal(new ControlApi('k').actionQueues());
    expect(error).toMatchObject({ status: 0, code: 'unexpected_response' });
    expect(error.message).toMatch(/^Unexpected answer from \/api\/actions\/queues: /);
  });

  it('an empty or non-JSON success body fails the schema rather than throwing a SyntaxError', async () => {
    daemon(() => new Response('not json', { status: 200 }));
    const error = await refusal(new ControlApi('k').actionLog());
    expect(error.code).toBe('unexpected_response');
  });

  it('saves the rules only over the version it read: the ETag goes back as If-Match', async () => {
    let etag = '"v1"';
    daemon((request) => {
      if (request.method === 'PUT') etag = '"v2"';
      return json(200, [], { ETag: etag });
    });
    const api = new ControlApi('k');
    await api.listRules();
    await api.saveRules([]);
    await api.saveRules([]);
    expect(sent.map((r) => [r.method, r.headers['If-Match']])).toEqual([
      ['GET', undefined],
      ['PUT', '"v1"'],
      ['PUT', '"v2"'],
    ]);
    expect(sent[1]!.headers['Content-Type']).toBe('application/json');
  });

  it('keeps every secret when changing one setting: the whole document goes back with {set: true}', async () => {
    const view = {
      obs: { url: 'ws://127.0.0.1:4455', password: { set: true } },
      youtube: { apiKey: { set: false } },
    };
    daemon(() => json(200, view));
    const api = new ControlApi('k');
    await api.changeSettings((current) => ({
      ...current,
      obs: { ...current.obs, url: 'ws://127.0.0.1:4456' },
    }));
    const put = sent.find((r) => r.method === 'PUT');
    expect(put?.body).toMatchObject({
      obs: { url: 'ws://127.0.0.1:4456', password: { set: true } },
      youtube: { apiKey: { set: true } },
    });
  });

  it('posts test events as test events', async () => {
    daemon(() => json(202, { accepted: true, firedRules: ['r1'] }));
    const receipt = await new ControlApi(undefined).sendEvent({
      type: 'follow',
      platform: 'api',
      user: { uniqueId: 'f', nickname: 'F' },
      data: {},
    });
    expect(receipt).toEqual({ accepted: true, firedRules: ['r1'] });
    expect(sent[0]).toMatchObject({ url: '/api/events?test=true', method: 'POST' });
    expect(sent[0]!.headers.Authorization).toBeUndefined();
  });

  it('reads the relay entries of /status one by one, leaving out only one it cannot read', async () => {
    const good = {
      overlayId: '3b7e6f0a-2c41-4d8e-9f15-6a0b7c8d9e21',
      state: 'connected',
      viewers: 1234,
      viewerUrl: 'https://gate.example/v/o-abc/3b7e6f0a-2c41-4d8e-9f15-6a0b7c8d9e21',
    };
    const other = {
      overlayId: '4c8f7a1b-3d52-4e9f-a026-7b1c8d9e0f32',
      state: 'backoff',
      viewers: 0,
      detail: 'x',
    };
    daemon(() =>
      json(200, {
        running: true,
        port: 7890,
        relay: [good, { ...good, state: 'teleporting' }, { ...good, viewers: -1 }, other],
      }),
    );
    expect(await new ControlApi('k').relay()).toEqual([good, other]);
    expect(sent[0]).toMatchObject({ url: '/status', method: 'GET' });
    expect(relayEntries({ running: true, port: 1 })).toEqual([]);
    expect(relayEntries({ relay: 'nope' })).toEqual([]);
    expect(relayEntries(null)).toEqual([]);
  });
});
