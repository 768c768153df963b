// What an action kind's executor is given, for unit tests without a daemon: overlay commands recorded,
// log lines kept, waits on a fake clock, and the real outbound calls (point them at a local server).
import type { ActionOf, ActionServices } from '../../../daemon/src/actions/kinds/types.js';
import { OutboundCalls } from '../../../daemon/src/actions/outbound.js';
import type { FiredAction } from '../../../daemon/src/rules/engine.js';
import type { OverlayCommandInput } from '../../../shared/protocol/index.js';
import { FakeTimers } from '../fake-timers.js';

export interface FakeActionServices extends ActionServices {
  clock: FakeTimers;
  /** Every overlay command sent, in order. */
  sent: { overlayId: string; command: OverlayCommandInput }[];
  lines: string[];
  /** The runner closing: waits end (with false), requests under way are aborted. */
  shutDown(): void;
}

export function fakeActionServices(overrides: Partial<ActionServices> = {}): FakeActionServices {
  const clock = new FakeTimers();
  const calls = new OutboundCalls(clock);
  const ends = new Set<() => void>();
  let closed = false;
  const services: FakeActionServices = {
    clock,
    sent: [],
    lines: [],
    sendCommand: (overlayId, command) => services.sent.push({ overlayId, command }),
    log: (line) => services.lines.push(line),
    now: () => clock.now(),
    wait: (ms) =>
      new Promise((resolve) => {
        const end = () => resolve(false);
        ends.add(end);
        clock.setTimeout(() => {
          ends.delete(end);
          resolve(true);
        }, ms);
      }),
    closed: () => closed,
    refusal: (origin) => calls.refusal(origin),
    request: (url, call) => calls.request(url, call),
    shutDown: () => {
      closed = true;
      for (const end of ends) end();
      ends.clear();
      calls.close();
    },
    ...overrides,
  };
  return services;
}

/** A fired action of `kind` from rule "Test rule", its first action. */
export function fired<K extends FiredAction['kind']>(
  kind: K,
  fields: Omit<ActionOf<K>, 'kind' | 'ruleId' | 'ruleName' | 'index'>,
): ActionOf<K> {
  return { ruleId: 'rule-1', ruleName: 'Test rule', index: 0, kind, ...fields } as unknown as ActionOf<K>;
}
