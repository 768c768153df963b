// `obs` actions against a local stand-in that speaks obs-websocket v5 (Hello with the challenge,
// Identify, Request/RequestResponse): scene switches with their revert, scene items by id, a wrong
// password, OBS restarting, and the connection in GET /status.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ObsConnection } from '../../daemon/src/actions/obs.js';
import { ActionRunner } from '../../daemon/src/actions/runner.js';
import { OBS_UNUSED } from '../../daemon/src/http/status-parts.js';
import type { FiredAction } from '../../daemon/src/rules/engine.js';
import { api, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { FakeTimers } from '../support/fake-timers.js';
import { type FakeObs, startFakeObs } from '../support/fakes/obs.js';
import { until, waitFor } from '../support/wait.js';

let obs: FakeObs;
let daemon: TestDaemon;

async function obsStatus(): Promise<{ state: string; lastError?: string }> {
  return (
    (await (await api(daemon, 'GET', '/status')).json()) as { obs: { state: string; lastError?: string } }
  ).obs;
}

async function setObs(url: string, password: string | null): Promise<void> {
  const current = (await (await api(daemon, 'GET', '/api/settings')).json()) as Record<string, unknown>;
  const res = await api(daemon, 'PUT', '/api/settings', { ...current, obs: { url, password } });
  expect(res.status).toBe(200);
}

const gift = {
  type: 'gift',
  user: { uniqueId: 'ann', nickname: 'Ann' },
  data: { giftName: 'Lion', repeatCount: 1 },
};

beforeAll(async () => {
  obs = await startFakeObs({ password: 'right-password' });
  daemon = await startTestDaemon();
  expect(await obsStatus()).toEqual({ state: 'off', detail: OBS_UNUSED });
});
afterAll(async () => {
  await daemon?.stop();
  await obs?.close();
});

describe('obs actions', () => {
  it('says when OBS refuses the password, and connects once it is right', async () => {
    await setObs(obs.url, 'wrong-password');
    const saved = await api(daemon, 'PUT', '/api/rules', [
      {
        id: 'camera',
        trigger: 'gift',
        actions: [
          {
            kind: 'obs',
            request: 'SetCurrentProgramScene',
            params: { sceneName: 'Gift camera' },
            revertAfterMs: 400,
          },
        ],
      },
    ]);
    expect(saved.status).toBe(200);
    await until(
      async () => ((await obsStatus()).state === 'disconnected' ? true : undefined),
      'the refusal',
      5000,
    );
    expect((await obsStatus()).lastError).toContain('password');
    await setObs(obs.url, 'right-password');
    await until(
      async () => ((await obsStatus()).state === 'connected' ? true : undefined),
      'connected',
      5000,
    );
  });

  it('switches the scene on a gift and back to the previous one after revertAfterMs', async () => {
    obs.requests.length = 0;
    obs.scene = 'Main';
    await api(daemon, 'POST', '/api/events', gift);
    await waitFor(() => obs.scene === 'Gift camera', 3000, 'the gift camera');
    expect(obs.requests.map((r) => r.requestType).slice(0, 2)).toEqual([
      'GetCurrentProgramScene',
      'SetCurrentProgramScene',
    ]);
    await waitFor(() => obs.scene === 'Main', 3000, 'the previous scene again');
    const log = (await (await api(daemon, 'GET', '/api/actions/log')).json()) as {
      kind: string;
      ok: boolean;
    }[];
    expect(log.at(-1)).toMatchObject({ kind: 'obs', ok: true });
  });

  it('shows a scene item by its id, as OBS takes it', async () => {
    await api(daemon, 'PUT', '/api/rules', [
      {
        id: 'item',
        trigger: 'gift',
        actions: [
          {
            kind: 'obs',
            request: 'SetSceneItemEnabled',
            params: { sceneName: 'Main', sourceName: 'Gift camera', enabled: true },
          },
        ],
      },
    ]);
    obs.requests.length = 0;
    await api(daemon, 'POST', '/api/events', gift);
    await waitFor(() => obs.items.get('Main/Gift camera') === true, 3000, 'the item shown');
    expect(obs.requests).toEqual([
      { requestType: 'GetSceneItemId', requestData: { sceneName: 'Main', sourceName: 'Gift camera' } },
      {
        requestType: 'SetSceneItemEnabled',
        requestData: { sceneName: 'Main', sceneItemId: 7, sceneItemEnabled: true },
      },
    ]);
  });

  it('reconnects when OBS restarts', async () => {
    obs.dropClients();
    await until(async () => ((await obsStatus()).state !== 'connected' ? true : undefined), 'the drop', 3000);
    await until(
      async () => ((await obsStatus()).state === 'connected' ? true : undefined),
      'reconnected',
      8000,
    );
    expect(obs.clients).toBe(1);
  }, 15_000);

  it('refuses an obs action with a request or params OBS would not take, naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ kind: 'obs', request: 'DeleteScene', params: {} }, '0.actions.0.request'],
      [
        { kind: 'obs', request: 'SetInputMute', params: { inputName: 'Mic' } },
        '0.actions.0.params.inputMuted',
      ],
      [
        { kind: 'obs', request: 'SetCurrentProgramScene', params: { sceneName: 'A' }, revertAfterMs: 0 },
        '0.actions.0.revertAfterMs',
      ],
    ];
    for (const [action, field] of cases) {
      const res = await api(daemon, 'PUT', '/api/rules', [{ id: 'bad', trigger: 'gift', actions: [action] }]);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { message: string } };
      expect(body.error.message.startsWith(`${field}:`), body.error.message).toBe(true);
    }
  });

  it('tests the connection from the settings: OBS version, or why not', async () => {
    const ok = await api(daemon, 'POST', '/api/obs/test');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true, obsVersion: '30.2.3', websocketVersion: '5.5.2' });
    await setObs(obs.url, 'not-it');
    expect(await (await api(daemon, 'POST', '/api/obs/test')).json()).toEqual({
      ok: false,
      error: 'OBS refused the password',
    });
    await setObs('ws://127.0.0.1:1', null);
    const refused = (await (await api(daemon, 'POST', '/api/obs/test')).json()) as {
      ok: boolean;
      error: string;
    };
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(/ECONNREFUSED|connect|closed/i);
    await setObs(obs.url, 'right-password');
  });

  it('runs an obs rule from "test this rule" and answers with its outcome', async () => {
    await until(
      async () => ((await obsStatus()).state === 'connected' ? true : undefined),
      'connected',
      8000,
    );
    obs.requests.length = 0;
    const res = await api(daemon, 'POST', '/api/rules/test', {
      rule: {
        id: 'try',
        trigger: 'gift',
        conditions: { giftName: 'Galaxy' },
        actions: [
          { kind: 'obs', request: 'SetCurrentProgramScene', params: { sceneName: '{data.giftName} cam' } },
        ],
      },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { event: { data: { giftName: string } }; outcomes: { ok: boolean }[] };
    expect(body.event.data.giftName).toBe('Galaxy');
    expect(body.outcomes).toMatchObject([{ ruleId: 'try', kind: 'obs', ok: true }]);
    expect(obs.requests.map((r) => r.requestData.sceneName)).toContain('Galaxy cam');
  });
});

/**
 * The OBS connection and the action runner on a fake clock, against an OBS stand-in of their own: time
 * moves only when the test says, while the WebSocket traffic is real.
 */
describe('OBS on a fake clock', () => {
  let fake: FakeObs;
  let clock: FakeTimers;
  let connection: ObsConnection;
  let runner: ActionRunner;
  const lines: string[] = [];

  async function start(): Promise<void> {
    fake = await startFakeObs();
    clock = new FakeTimers();
    lines.length = 0;
    connection = new ObsConnection({
      settings: () => ({ url: fake.url }),
      log: (line) => lines.push(line),
      timers: clock,
    });
    runner = new ActionRunner({
      sendCommand: () => {},
      obs: connection,
      timers: clock,
      log: (l) => lines.push(l),
    });
    connection.ensure();
    await waitFor(() => connection.status().state === 'connected', 5000, 'connected');
  }
  afterEach(async () => {
    runner?.close();
    await connection?.close();
    await fake?.close();
  });

  const scene = (sceneName: string, extra: Partial<FiredAction> = {}): FiredAction =>
    ({
      ruleId: 'rule-gift',
      ruleName: 'Gift scene',
      index: 0,
      kind: 'obs',
      request: 'SetCurrentProgramScene',
      params: { sceneName },
      revertAfterMs: 5000,
      ...extra,
    }) as FiredAction;

  /** The scenes OBS was asked to show, in order. */
  const switches = () =>
    fake.requests
      .filter((r) => r.requestType === 'SetCurrentProgramScene')
      .map((r) => r.requestData.sceneName);

  /** Moves the clock, then waits until OBS shows `expected` (real traffic follows each due timer). */
  async function advanceTo(ms: number, expected: string): Promise<void> {
    clock.advance(ms);
    await waitFor(() => fake.scene === expected, 3000, `OBS on ${expected}`);
  }

  it('three queued gifts with revertAfterMs end with OBS on the original scene, each after the previous revert', async () => {
    await start();
    for (let i = 0; i < 3; i++) runner.run([scene('Gift', { queue: 'scenes' })]);
    for (let round = 1; round <= 3; round++) {
      // The switch is done (its revert is due in 5 s); the next gift waits for that revert.
      await waitFor(() => runner.log().length === round, 3000, `gift ${round}`);
      expect(fake.scene).toBe('Gift');
      expect(runner.queues()).toEqual([{ name: 'scenes', running: true, waiting: 3 - round }]);
      clock.advance(5000);
      await waitFor(() => switches().filter((s) => s === 'Main').length === round, 3000, `revert ${round}`);
    }
    await waitFor(() => runner.queues().length === 0, 3000, 'the queue done');
    expect(fake.scene).toBe('Main');
    expect(switches()).toEqual(['Gift', 'Main', 'Gift', 'Main', 'Gift', 'Main']);
    expect(runner.log().map((e) => e.ok)).toEqual([true, true, true]);
  });

  it('without a queue, overlapping temporary scenes never restore one another: OBS ends on the original scene', async () => {
    await start();
    runner.run([scene('Gift A')]);
    await waitFor(() => runner.log().length === 1, 3000, 'gift A');
    clock.advance(2000);
    runner.run([scene('Gift B')]);
    await waitFor(() => runner.log().length === 2, 3000, 'gift B');
    expect(fake.scene).toBe('Gift B');
    // Gift A's revert falls due while Gift B still shows: it must not bring back Gift A, nor cut B short.
    clock.advance(3000);
    // A request of the revert would be on its way once the due timer's promise callbacks ran; one request
    // of ours sent after them and answered over the same connection comes back after OBS got it.
    await new Promise((resolve) => setImmediate(resolve));
    await connection.call('GetVersion');
    expect(fake.scene).toBe('Gift B');
    await advanceTo(2000, 'Main');
    expect(
      fake.requests
        .filter((r) => r.requestType === 'SetCurrentProgramScene')
        .map((r) => r.requestData.sceneName),
    ).toEqual(['Gift A', 'Gift B', 'Main']);
  });

  it('a silent OBS: each request fails after 5 s in the action log, the queue moves on, and three in a row re-open the connection', async () => {
    await start();
    fake.silent = true;
    const connectionsBefore = fake.connections;
    for (let i = 0; i < 3; i++)
      runner.run([scene(`Hung ${i}`, { queue: 'scenes', revertAfterMs: undefined } as Partial<FiredAction>)]);
    for (let i = 1; i <= 3; i++) {
      await waitFor(() => fake.requests.length === i, 3000, `request ${i} sent`);
      expect(runner.queues()).toEqual([{ name: 'scenes', running: true, waiting: 3 - i }]);
      clock.advance(5000);
      await waitFor(() => runner.log().length === i, 3000, `outcome ${i}`);
    }
    expect(runner.log().map((e) => [e.ok, e.error])).toEqual(
      Array.from({ length: 3 }, () => [false, 'OBS did not answer SetCurrentProgramScene within 5 s']),
    );
    expect(runner.queues()).toEqual([]);
    expect(
      lines.filter((l) => l.startsWith('[actions] rule "Gift scene" action 1 (obs) failed')),
    ).toHaveLength(1);
    // The third timeout in a row re-opened the connection.
    expect(
      lines.some((l) => l.includes('3 requests in a row got no answer within 5 s: connecting again')),
    ).toBe(true);
    await waitFor(() => fake.connections === connectionsBefore + 1, 3000, 'a new connection');
    await waitFor(() => connection.status().state === 'connected', 3000, 'connected again');
    fake.silent = false;
    runner.run([scene('Back', { revertAfterMs: undefined } as Partial<FiredAction>)]);
    await waitFor(() => fake.scene === 'Back', 3000, 'an answered request');
  });

  it('a burst of requests in one turn reaches OBS whole and in order, each answered; a lone one after it too', async () => {
    await start();
    // Twenty gifts read together: their requests share one write, and nothing is lost or reordered.
    const answers = Array.from({ length: 20 }, (_, i) =>
      connection.call('SetCurrentProgramScene', { sceneName: `Burst ${i}` }),
    );
    await Promise.all(answers);
    expect(switches()).toEqual(Array.from({ length: 20 }, (_, i) => `Burst ${i}`));
    expect(fake.scene).toBe('Burst 19');
    await connection.call('SetCurrentProgramScene', { sceneName: 'Alone' });
    expect(fake.scene).toBe('Alone');
  });

  it('a frame from OBS over 4 MiB closes the connection and fails the action at once; a normal one is taken', async () => {
    await start();
    fake.replyPadding = 3 * 1024 * 1024;
    runner.run([scene('Big but fine', { revertAfterMs: undefined } as Partial<FiredAction>)]);
    await waitFor(() => runner.log().length === 1, 3000, 'the first outcome');
    expect(runner.log()[0]).toMatchObject({ ok: true });
    fake.replyPadding = 5 * 1024 * 1024;
    runner.run([scene('Too big', { revertAfterMs: undefined } as Partial<FiredAction>)]);
    await waitFor(() => runner.log().length === 2, 3000, 'the second outcome');
    expect(runner.log()[1]).toMatchObject({ ok: false });
    expect(runner.log()[1]!.error).toBe('the connection to OBS closed: OBS sent a frame larger than 4 MiB');
    expect(connection.status().state).not.toBe('connected');
  });
});
