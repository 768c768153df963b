import { describe, expect, it } from 'vitest';
import type { ObsRequest } from '../../../../shared/rules.js';
import { fakeActionServices, fired } from '../../../../test/support/fakes/action-services.js';
import { obs } from './obs.js';
import type { ObsCalls } from './types.js';

/** An OBS connection object keeping the state the requests touch, recording each request. */
class FakeObsConnection implements ObsCalls {
  scene = 'Main';
  readonly items = new Map<string, boolean>([['Main/Camera', true]]);
  readonly mutes = new Map<string, boolean>([['Mic', false]]);
  readonly filters = new Map<string, boolean>([['Camera/Blur', false]]);
  readonly requests: string[] = [];
  /** Requests of this type fail, as OBS answers a request it cannot do. */
  failing = new Set<string>();

  async call(type: string, data: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    this.requests.push(type);
    if (this.failing.has(type)) throw new Error(`OBS refused ${type}`);
    const item = `${String(data.sceneName)}/${data.sceneItemId === 7 ? 'Camera' : '?'}`;
    switch (type) {
      case 'GetCurrentProgramScene':
        return { currentProgramSceneName: this.scene };
      case 'SetCurrentProgramScene':
        this.scene = String(data.sceneName);
        return {};
      case 'GetSceneItemId':
        return { sceneItemId: data.sourceName === 'Camera' ? 7 : 0 };
      case 'GetSceneItemEnabled':
        return { sceneItemEnabled: this.items.get(item) };
      case 'SetSceneItemEnabled':
        this.items.set(item, data.sceneItemEnabled === true);
        return {};
      case 'GetInputMute':
        return { inputMuted: this.mutes.get(String(data.inputName)) };
      case 'SetInputMute':
        this.mutes.set(String(data.inputName), data.inputMuted === true);
        return {};
      case 'ToggleInputMute':
        this.mutes.set(String(data.inputName), !this.mutes.get(String(data.inputName)));
        return {};
      case 'GetSourceFilter':
        return { filterEnabled: this.filters.get(`${String(data.sourceName)}/${String(data.filterName)}`) };
      case 'SetSourceFilterEnabled':
        this.filters.set(
          `${String(data.sourceName)}/${String(data.filterName)}`,
          data.filterEnabled === true,
        );
        return {};
      default:
        return {};
    }
  }
}

function setup() {
  const connection = new FakeObsConnection();
  const services = fakeActionServices({ obs: connection });
  return { connection, services, run: obs(services) };
}

const request = (req: ObsRequest, params: Record<string, unknown>, revertAfterMs?: number) =>
  fired('obs', { request: req, params, ...(revertAfterMs ? { revertAfterMs } : {}) });

describe('obs action', () => {
  it('fails, saying so, when OBS is not set up', async () => {
    await expect(
      obs(fakeActionServices())(request('TriggerHotkeyByName', { hotkeyName: 'x' })),
    ).rejects.toThrow('OBS is not set up');
  });

  it('a lasting change is one request and leaves nothing to wait for', async () => {
    const { connection, run } = setup();
    expect(await run(request('SetCurrentProgramScene', { sceneName: 'BRB' }))).toBeUndefined();
    expect(connection.scene).toBe('BRB');
    expect(connection.requests).toEqual(['SetCurrentProgramScene']);
    expect(await run(request('TriggerHotkeyByName', { hotkeyName: 'Clip' }))).toBeUndefined();
    expect(connection.requests.at(-1)).toBe('TriggerHotkeyByName');
  });

  it('with revertAfterMs reads the state first and puts it back after that time', async () => {
    const { connection, services, run } = setup();
    const executed = await run(request('SetCurrentProgramScene', { sceneName: 'Gift' }, 3000));
    expect(connection.scene).toBe('Gift');
    services.clock.advance(2999);
    expect(connection.scene).toBe('Gift');
    services.clock.advance(1);
    await executed?.ended;
    expect(connection.scene).toBe('Main');
    expect(connection.requests).toEqual([
      'GetCurrentProgramScene',
      'SetCurrentProgramScene',
      'SetCurrentProgramScene',
    ]);
  });

  it('reverts a scene item, a mute, a toggle and a filter to what they were', async () => {
    const { connection, services, run } = setup();
    const all = await Promise.all([
      run(request('SetSceneItemEnabled', { sceneName: 'Main', sourceName: 'Camera', enabled: false }, 1000)),
      run(request('SetInputMute', { inputName: 'Mic', inputMuted: true }, 1000)),
      run(request('ToggleInputMute', { inputName: 'Desk' }, 1000)),
      run(
        request(
          'SetSourceFilterEnabled',
          { sourceName: 'Camera', filterName: 'Blur', filterEnabled: true },
          1000,
        ),
      ),
    ]);
    expect([
      connection.items.get('Main/Camera'),
      connection.mutes.get('Mic'),
      connection.mutes.get('Desk'),
    ]).toEqual([false, true, true]);
    expect(connection.filters.get('Camera/Blur')).toBe(true);
    services.clock.advance(1000);
    await Promise.all(all.map((executed) => executed?.ended));
    expect([
      connection.items.get('Main/Camera'),
      connection.mutes.get('Mic'),
      connection.mutes.get('Desk'),
    ]).toEqual([true, false, false]);
    expect(connection.filters.get('Camera/Blur')).toBe(false);
  });

  it('overlapping temporary changes go back to the state before the first, once the last is due', async () => {
    const { connection, services, run } = setup();
    const first = await run(request('SetCurrentProgramScene', { sceneName: 'Gift A' }, 1000));
    const second = await run(request('SetCurrentProgramScene', { sceneName: 'Gift B' }, 2000));
    services.clock.advance(1000);
    await first?.ended;
    expect(connection.scene).toBe('Gift B'); // not back to the temporary "Gift A", not yet to Main
    services.clock.advance(1000);
    await second?.ended;
    expect(connection.scene).toBe('Main');
  });

  it('a lasting change made meanwhile is kept: the temporary one under way puts nothing back', async () => {
    const { connection, services, run } = setup();
    const temporary = await run(request('SetCurrentProgramScene', { sceneName: 'Gift' }, 1000));
    await run(request('SetCurrentProgramScene', { sceneName: 'Ending' }));
    services.clock.advance(1000);
    await temporary?.ended;
    expect(connection.scene).toBe('Ending');
  });

  it('a change OBS refused fails and leaves no revert due; the next one reads the state afresh', async () => {
    const { connection, services, run } = setup();
    connection.failing.add('SetCurrentProgramScene');
    await expect(run(request('SetCurrentProgramScene', { sceneName: 'Gift' }, 1000))).rejects.toThrow(
      'OBS refused SetCurrentProgramScene',
    );
    expect(services.clock.size).toBe(0);
    connection.failing.clear();
    connection.scene = 'Other';
    const next = await run(request('SetCurrentProgramScene', { sceneName: 'Gift' }, 1000));
    services.clock.advance(1000);
    await next?.ended;
    expect(connection.scene).toBe('Other');
  });

  it('an undo OBS refuses is one log line naming the rule; the revert still ends', async () => {
    const { connection, services, run } = setup();
    const executed = await run(request('ToggleInputMute', { inputName: 'Mic' }, 500));
    connection.failing.add('ToggleInputMute');
    services.clock.advance(500);
    await executed?.ended;
    expect(services.lines).toEqual([
      '[actions] rule "Test rule" could not undo ToggleInputMute: OBS refused ToggleInputMute',
    ]);
  });

  it('when the runner closes, the revert ends at once and nothing is put back', async () => {
    const { connection, services, run } = setup();
    const executed = await run(request('SetCurrentProgramScene', { sceneName: 'Gift' }, 60_000));
    services.shutDown();
    await executed?.ended;
    expect(connection.scene).toBe('Gift');
  });
});
