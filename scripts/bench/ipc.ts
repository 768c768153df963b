// The messages between the bench process and its server children (over Node's IPC channel), validated on arrival.
import { getHeapSpaceStatistics } from 'node:v8';
import * as v from 'valibot';

/** Child → parent once listening. */
export const ReadyMessage = v.object({
  type: v.literal('ready'),
  port: v.number(),
  /** The daemon's admin key (absent for the baselines). */
  adminKey: v.optional(v.string()),
  /** Overlay ids in force at start. */
  overlayIds: v.optional(v.array(v.string())),
  /** The stand-in OBS of the action sinks. */
  obsUrl: v.optional(v.string()),
});
export type ReadyMessage = v.InferOutput<typeof ReadyMessage>;

/** Parent → child. `gc` runs a full collection (the child runs with --expose-gc); `stop` exits. */
export const Command = v.object({ id: v.number(), command: v.picklist(['gc', 'stop']) });
export type Command = v.InferOutput<typeof Command>;

/**
 * Child → parent when a command is done; after `gc`, the V8 heap in use and the young generation's
 * committed size (bytes).
 */
const Done = v.object({
  type: v.literal('done'),
  id: v.number(),
  heapUsed: v.optional(v.number()),
  young: v.optional(v.number()),
});

export const ChildMessage = v.variant('type', [ReadyMessage, Done]);
export type ChildMessage = v.InferOutput<typeof ChildMessage>;

/** Answers `gc` and `stop` in a child; `stop` runs `close` first. */
export function serveCommands(close: () => Promise<void>): void {
  process.on('message', (raw) => {
    const parsed = v.safeParse(Command, raw);
    if (!parsed.success) return;
    const { id, command } = parsed.output;
    if (command === 'gc') {
      const gc = globalThis.gc;
      // Two passes: the first may only queue finalisers that free more on the second.
      gc?.();
      gc?.();
      const young = getHeapSpaceStatistics()
        .filter((space) => space.space_name === 'new_space' || space.space_name === 'new_large_object_space')
        .reduce((sum, space) => sum + space.space_size, 0);
      process.send?.({ type: 'done', id, heapUsed: process.memoryUsage().heapUsed, young });
      return;
    }
    void close().finally(() => {
      process.send?.({ type: 'done', id }, () => process.exit(0));
    });
  });
  process.on('disconnect', () => {
    void close().finally(() => process.exit(0));
  });
}
