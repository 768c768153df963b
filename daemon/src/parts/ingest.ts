// The ingest part: the one seam for stream events and, by default, the pipeline after the broadcast
// (rules, actions, the built-in chat commands, the live values of widgets, the TikFinity event feed).
import type { ActionRunner } from '../actions/runner.js';
import { ChatCommands, journalFigures } from '../chat/commands.js';
import { createIngest, type EventHandler, type Ingest, type IngestContext } from '../ingest/ingest.js';
import { createEventPipeline } from '../ingest/pipeline.js';
import type { Journal } from '../journal/journal.js';
import type { OverlayStore } from '../store/overlay-store.js';
import type { RulesStore } from '../store/rules-store.js';
import type { SettingsStore } from '../store/settings-store.js';
import type { LiveValuesStore } from '../widget-state/live-values-store.js';
import type { Hub } from '../ws/hub.js';

export interface IngestOptions {
  /** Steps of event handling after the broadcast; default: the rules and widget state (pipeline.ts). */
  eventHandlers?: EventHandler[];
  /** false: events are not written to the journal. */
  journalEvents?: boolean;
}

export interface IngestPart {
  ingest: Ingest;
  close(): Promise<void>;
}

export function startIngest(
  options: IngestOptions,
  ctx: {
    hub: Hub;
    overlays: OverlayStore;
    rules: RulesStore;
    journal: Journal;
    actions: ActionRunner;
    liveValues: LiveValuesStore;
    settings: SettingsStore;
    /** The TikFinity event feed's step, after the rest of the pipeline. */
    tikfinityFeed?: EventHandler;
    /** Chat the daemon sent, come back from the platform: dropped before it is an event. */
    isEcho?: IngestContext['isEcho'];
    log: (line: string) => void;
  },
): IngestPart {
  const { hub, overlays, rules, journal, actions, liveValues, settings, tikfinityFeed, isEcho, log } = ctx;
  // The live values follow events and resets from now on.
  liveValues.attach({ overlays, commands: hub, journal });
  const pipeline = options.eventHandlers
    ? undefined
    : createEventPipeline(
        { hub, overlays, rules, log, journal },
        {
          actions,
          liveValues,
          commands: new ChatCommands({
            settings: () => settings.current().commands,
            figures: journalFigures(journal),
          }),
          ...(tikfinityFeed ? { tikfinityFeed } : {}),
        },
      );
  const ingest = createIngest(
    { hub, overlays, rules, log, isEcho, ...(options.journalEvents === false ? {} : { journal }) },
    options.eventHandlers ?? pipeline?.handlers,
  );
  return {
    ingest,
    close() {
      pipeline?.close();
      // The waiting widget changes go out to the pages before the hub closes, then to disk.
      return liveValues.close();
    },
  };
}
