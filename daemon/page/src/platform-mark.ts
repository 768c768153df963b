// The small mark before a viewer's name that says which platform an event came from.
import { type PlatformId, platformFacts } from '../../../shared/platforms.js';

/**
 * The mark of a platform or money provider as the platform table has it, none for `api` (an event posted
 * by a tool has no platform to show). The glyph is drawn by platform-mark.css from `data-platform`, so the
 * page ships no images and the viewer's text stays the line's only text.
 */
export function platformMark(platform: PlatformId): HTMLElement | undefined {
  const facts = platformFacts(platform);
  if (!facts?.mark) return undefined;
  const { name } = facts;
  const mark = document.createElement('span');
  mark.className = 'platform-mark';
  mark.dataset.platform = platform;
  mark.title = name;
  mark.setAttribute('role', 'img');
  mark.setAttribute('aria-label', name);
  return mark;
}
