// The actions part: OBS (connected once a rule uses it), speech with its cache swept every ten minutes,
// and the runner that does what fired rules ask (webhooks, Streamer.bot, overlay commands).
import type { RuleList } from '../../../shared/rules.js';
import { ObsConnection } from '../actions/obs.js';
import { ActionRunner } from '../actions/runner.js';
import { Speech } from '../actions/speech.js';
import { errorMessage } from '../errors.js';
import type { DataDir } from '../store/data-dir.js';
import type { RulesStore } from '../store/rules-store.js';
import type { SettingsStore } from '../store/settings-store.js';
import type { Hub } from '../ws/hub.js';

export interface ActionsPart {
  obs: ObsConnection;
  speech: Speech;
  actions: ActionRunner;
  close(): Promise<void>;
}

export function startActions(ctx: {
  dataDir: DataDir;
  settings: SettingsStore;
  rules: RulesStore;
  hub: Hub;
  log: (line: string) => void;
}): ActionsPart {
  const { dataDir, settings, rules, hub, log } = ctx;
  // OBS for `obs` actions: connected once the rules have one, following the settings at once.
  const obs = new ObsConnection({ settings: () => settings.current().obs, log });
  const usesObs = (list: RuleList) => list.some((r) => r.actions.some((a) => a.kind === 'obs'));
  if (usesObs(rules.current())) obs.ensure();
  const stopFollowingRules = rules.subscribe((list) => {
    if (usesObs(list)) obs.ensure();
  });
  const stopFollowingSettings = settings.onChange(() => obs.settingsChanged());
  // Speech with the OS's voices; old files are swept every ten minutes. The blocked words are looked
  // for again in the plain text the engine reads (markup and invisible characters hide none).
  const speech = new Speech({ dir: dataDir.ttsDir, blockedWords: () => settings.current().tts.blockedWords });
  const sweep = () =>
    speech
      .sweep()
      .catch((err: unknown) => log(`[speech] removing old speech files failed: ${errorMessage(err)}`));
  void sweep();
  const sweepTimer = setInterval(() => void sweep(), 10 * 60 * 1000).unref();
  // What fired rules do beyond overlay commands (webhooks, Streamer.bot), with its log and queues.
  const actions = new ActionRunner({
    obs,
    speech,
    tts: () => settings.current().tts,
    sendCommand: (overlayId, command) => hub.sendCommand(overlayId, command),
    streamerbotUrl: () => settings.current().streamerbot.url,
    log,
  });
  return {
    obs,
    speech,
    actions,
    async close() {
      actions.close();
      clearInterval(sweepTimer);
      stopFollowingRules();
      stopFollowingSettings();
      await obs.close();
    },
  };
}
