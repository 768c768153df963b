// `speak`: the text cut to `maxChars`, dropped when it holds a blocked word or the viewer was spoken for
// within `userCooldownMs`, rendered (or found in the cache) and sent to the overlay page's audio queue as
// `play-sound` for `@page`.
import { blockedWord, speechText } from '../speech-text.js';
import type { ExecutorFactory } from './types.js';

/** The widget id that addresses the overlay page's own audio queue. */
const PAGE_AUDIO = '@page';
/** Viewers remembered for the cooldown before those whose cooldown ended are forgotten. */
const SPEAKERS_KEPT = 10_000;

export const speak: ExecutorFactory<'speak'> = (services) => {
  /** When each viewer last had something spoken (lowercased uniqueId), for `tts.userCooldownMs`. */
  const spokeAt = new Map<string, number>();
  return async (action) => {
    const speech = services.speech;
    const tts = services.tts?.();
    if (!speech || !tts) throw new Error('speech is not set up');
    if (!tts.enabled) throw new Error('speech is turned off in the settings');
    // Plain text first (no engine markup or control characters), so the blocked words and the cut
    // apply to what the engine will read.
    const plain = speechText(action.text);
    const blocked = blockedWord(plain, tts.blockedWords);
    if (blocked !== undefined) throw new Error(`dropped: the text has the blocked word "${blocked}"`);
    const text = cut(plain, tts.maxChars);
    if (!text) throw new Error('nothing to say: the text is empty');
    const sender = action.sender.toLowerCase();
    if (tts.userCooldownMs > 0 && sender) {
      const now = services.now();
      const last = spokeAt.get(sender);
      if (last !== undefined && now - last < tts.userCooldownMs)
        throw new Error(`dropped: ${action.sender} was spoken for less than ${tts.userCooldownMs} ms ago`);
      spokeAt.set(sender, now);
      if (spokeAt.size > SPEAKERS_KEPT)
        for (const [who, at] of spokeAt) if (now - at >= tts.userCooldownMs) spokeAt.delete(who);
    }
    const hash = await speech.render(text, { voice: action.voice, rate: action.rate });
    if (services.closed()) return undefined;
    services.sendCommand(action.overlayId, {
      command: 'play-sound',
      widgetId: PAGE_AUDIO,
      payload: { sound: `/tts/${hash}.wav`, volume: action.volume ?? 1 },
    });
    return undefined;
  };
};

/** At most `max` characters (whole code points), ending at a word when one ends near the cut. */
export function cut(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  const head = chars.slice(0, max).join('');
  const space = head.lastIndexOf(' ');
  return (space > max * 0.8 ? head.slice(0, space) : head).trimEnd();
}
