// The actions part: OBS (connected once a rule uses it), speech with its cache swept every ten minutes,
// chat (the platforms' senders, their send queues and the echo of what was sent), and the runner that does
// what fired rules ask (webhooks, Streamer.bot, overlay commands, chat).
import type { RuleList } from '../../../shared/rules.js';
import { ObsConnection } from '../actions/obs.js';
import { ActionRunner } from '../actions/runner.js';
import { Speech } from '../actions/speech.js';
import { ChatEcho } from '../chat/echo.js';
import { ChatSendQueue } from '../chat/send-queue.js';
import { ChatSenders } from '../chat/senders.js';
import { errorMessage } from '../errors.js';
import type { DataDir } from '../store/data-dir.js';
import type { RulesStore } from '../store/rules-store.js';
import type { SettingsStore } from '../store/settings-store.js';
import { systemTimers } from '../timers.js';
import type { Hub } from '../ws/hub.js';

export interface ActionsPart {
  obs: ObsConnection;
  speech: Speech;
  actions: ActionRunner;
  /** Each platform's chat sender: a platform's sign-in registers its own (`register` returns its undo). */
  chatSenders: ChatSenders;
  /** What the daemon sent in chat, so ingest drops its echo (`isEcho`). */
  chatEcho: ChatEcho;
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
  // Chat as the streamer: the senders the platforms register, one send queue per platform keeping its
  // limit, and what was sent remembered so the platform's echo of it is not an event.
  const chatSenders = new ChatSenders();
  const chatEcho = new ChatEcho(() => Date.now());
  const chatQueue = new ChatSendQueue({ timers: systemTimers(), log, echo: chatEcho });
  // What fired rules do beyond overlay commands (webhooks, Streamer.bot, chat), with its log and queues.
  const actions = new ActionRunner({
    obs,
    speech,
    tts: () => settings.current().tts,
    sendCommand: (overlayId, command) => hub.sendCommand(overlayId, command),
    streamerbotUrl: () => settings.current().streamerbot.url,
    chat: { senders: chatSenders, queue: chatQueue },
    log,
  });
  return {
    obs,
    speech,
    actions,
    chatSenders,
    chatEcho,
    async close() {
      actions.close();
      chatQueue.close();
      clearInterval(sweepTimer);
      stopFollowingRules();
      stopFollowingSettings();
      await obs.close();
    },
  };
}
