// `obs` actions against a local stand-in that speaks obs-websocket v5 (Hello with the challenge,
// Identify, Request/RequestResponse): scene switches with their revert, scene items by id, a wrong
// password, OBS restarting, and the connection in GET /status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestDaemon, type TestDaemon } from '../support/daemon.js';
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
  expect(await obsStatus()).toEqual({ state: 'off' });
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
