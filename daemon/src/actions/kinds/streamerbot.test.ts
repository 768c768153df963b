import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeActionServices, fired } from '../../../../test/support/fakes/action-services.js';
import { type FakeServer, listenLoopback, readBody } from '../../../../test/support/fakes/listen.js';
import { streamerbot } from './streamerbot.js';
import type { ActionServices } from './types.js';

let server: FakeServer;
let status = 200;
const received: { method: string; url: string; type: string | undefined; body: unknown }[] = [];

beforeAll(async () => {
  server = await listenLoopback(async (req, res) => {
    const body = await readBody(req);
    received.push({
      method: req.method ?? '',
      url: req.url ?? '',
      type: req.headers['content-type'],
      body: JSON.parse(body),
    });
    res.writeHead(status);
    res.end();
  });
});
afterAll(() => server.close());
beforeEach(() => {
  received.length = 0;
  status = 200;
});

const doAction = fired('streamerbot', { action: 'Gift camera', args: { user: 'Bob', count: '3' } });

describe('streamerbot action', () => {
  it("posts the action by name with its args to Streamer.bot's /DoAction", async () => {
    await streamerbot(fakeActionServices({ streamerbotUrl: () => `${server.url}//` }))(doAction);
    expect(received).toEqual([
      {
        method: 'POST',
        url: '/DoAction',
        type: 'application/json',
        body: { action: { name: 'Gift camera' }, args: { user: 'Bob', count: '3' } },
      },
    ]);
  });

  it("goes to Streamer.bot's default address when the settings name none", async () => {
    const request = vi.fn<ActionServices['request']>(async () => {});
    await streamerbot(fakeActionServices({ request }))(doAction);
    expect(request).toHaveBeenCalledWith(
      'http://127.0.0.1:7474/DoAction',
      expect.objectContaining({ method: 'POST' }),
    );
  });

  it('fails when Streamer.bot answers outside 2xx', async () => {
    status = 404;
    await expect(
      streamerbot(fakeActionServices({ streamerbotUrl: () => server.url }))(doAction),
    ).rejects.toThrow(/^HTTP 404$/);
  });
});
