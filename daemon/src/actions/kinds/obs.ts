// `obs`: one OBS request, translated to what OBS takes. With `revertAfterMs` the state before is read
// first and put back after that time (the previous scene, the opposite enabled or muted state).
import { errorMessage } from '../../errors.js';
import type { ActionOf, ActionServices, Executed, ExecutorFactory, ObsCalls } from './types.js';

type ObsAction = ActionOf<'obs'>;

/**
 * OBS states under a temporary change (`revertAfterMs`), by what they belong to (the program scene, a scene
 * item, an input, a filter): the state before the first of them and how many reverts are still due. Only
 * the last revert puts the state back, and it puts back that first state, never a state that was itself
 * temporary.
 */
class TemporaryChanges {
  readonly #temporary = new Map<string, { base: unknown; pending: number }>();

  constructor(private readonly services: ActionServices) {}

  /** Runs `undo` after `ms`; settles when it ran (failed: logged), or at once when the runner closes. */
  after(action: ObsAction, ms: number, undo: () => Promise<unknown>): Executed {
    return {
      ended: this.services.wait(ms).then(async (due) => {
        if (!due) return;
        try {
          await undo();
        } catch (err) {
          this.services.log?.(
            `[actions] rule "${action.ruleName}" could not undo ${action.request}: ${errorMessage(err)}`,
          );
        }
      }),
    };
  }

  /**
   * An OBS change, temporary with `revertAfterMs`. The state to go back to is read only when no other
   * temporary change of the same thing is under way; otherwise it is the one that change read. Each
   * revert that falls due counts down, and only the last one puts that state back.
   */
  async change<T>(
    action: ObsAction,
    key: string,
    read: () => Promise<T>,
    apply: () => Promise<unknown>,
    restore: (before: T) => Promise<unknown>,
  ): Promise<Executed | undefined> {
    const temporary = this.#temporary;
    const revert = action.revertAfterMs;
    if (!revert) {
      await apply();
      // A lasting change is what the temporary ones under way now go back to.
      const slot = temporary.get(key);
      if (slot) slot.base = undefined;
      return undefined;
    }
    let slot = temporary.get(key);
    if (!slot) {
      const before = await read();
      slot = temporary.get(key) ?? { base: before, pending: 0 };
      temporary.set(key, slot);
    }
    slot.pending++;
    const mine = slot;
    const release = (): T | undefined => {
      mine.pending--;
      if (mine.pending > 0) return undefined;
      if (temporary.get(key) === mine) temporary.delete(key);
      return mine.base as T | undefined;
    };
    try {
      await apply();
    } catch (err) {
      release();
      throw err;
    }
    return this.after(action, revert, () => {
      const base = release();
      return base === undefined ? Promise.resolve() : restore(base);
    });
  }
}

/** One `obs` action's request, as OBS takes it (and read back first when it is to be reverted). */
async function runRequest(
  action: ObsAction,
  connection: ObsCalls,
  changes: TemporaryChanges,
): Promise<Executed | undefined> {
  const call = connection.call.bind(connection);
  const p = action.params;
  const revert = action.revertAfterMs;
  switch (action.request) {
    case 'SetCurrentProgramScene':
      return changes.change(
        action,
        'scene',
        async () => String((await call('GetCurrentProgramScene')).currentProgramSceneName ?? ''),
        () => call('SetCurrentProgramScene', { sceneName: p.sceneName }),
        (before) => (before ? call('SetCurrentProgramScene', { sceneName: before }) : Promise.resolve()),
      );
    case 'SetSceneItemEnabled': {
      const { sceneItemId } = await call('GetSceneItemId', {
        sceneName: p.sceneName,
        sourceName: p.sourceName,
      });
      const item = { sceneName: p.sceneName, sceneItemId };
      return changes.change(
        action,
        `item\u0000${String(p.sceneName)}\u0000${String(sceneItemId)}`,
        async () => (await call('GetSceneItemEnabled', item)).sceneItemEnabled === true,
        () => call('SetSceneItemEnabled', { ...item, sceneItemEnabled: p.enabled === true }),
        (before) => call('SetSceneItemEnabled', { ...item, sceneItemEnabled: before }),
      );
    }
    case 'SetInputMute':
      return changes.change(
        action,
        `mute\u0000${String(p.inputName)}`,
        async () => (await call('GetInputMute', { inputName: p.inputName })).inputMuted === true,
        () => call('SetInputMute', { inputName: p.inputName, inputMuted: p.inputMuted === true }),
        (before) => call('SetInputMute', { inputName: p.inputName, inputMuted: before }),
      );
    case 'ToggleInputMute': {
      await call('ToggleInputMute', { inputName: p.inputName });
      if (!revert) return undefined;
      return changes.after(action, revert, () => call('ToggleInputMute', { inputName: p.inputName }));
    }
    case 'SetSourceFilterEnabled': {
      const filter = { sourceName: p.sourceName, filterName: p.filterName };
      return changes.change(
        action,
        `filter\u0000${String(p.sourceName)}\u0000${String(p.filterName)}`,
        async () => (await call('GetSourceFilter', filter)).filterEnabled === true,
        () => call('SetSourceFilterEnabled', { ...filter, filterEnabled: p.filterEnabled === true }),
        (before) => call('SetSourceFilterEnabled', { ...filter, filterEnabled: before }),
      );
    }
    case 'TriggerHotkeyByName':
      await call('TriggerHotkeyByName', { hotkeyName: p.hotkeyName });
      return undefined;
  }
}

export const obs: ExecutorFactory<'obs'> = (services) => {
  const changes = new TemporaryChanges(services);
  return async (action) => {
    const connection = services.obs;
    if (!connection) throw new Error('OBS is not set up');
    return runRequest(action, connection, changes);
  };
};
