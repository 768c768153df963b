// The small mark before a viewer's name that says which platform an event came from.
import type { Platform } from '../../../shared/protocol/index.js';

const NAMES: Partial<Record<Platform, string>> = {
  tiktok: 'TikTok',
  twitch: 'Twitch',
  youtube: 'YouTube',
  kick: 'Kick',
};

/**
 * The mark of a live platform, none for `api` (an event posted by a tool has no platform to show). The
 * glyph is drawn by platform-mark.css from `data-platform`, so the page ships no images and the viewer's text
 * stays the line's only text.
 */
export function platformMark(platform: Platform): HTMLElement | undefined {
  const name = NAMES[platform];
  if (!name) return undefined;
  const mark = document.createElement('span');
  mark.className = 'platform-mark';
  mark.dataset.platform = platform;
  mark.title = name;
  mark.setAttribute('role', 'img');
  mark.setAttribute('aria-label', name);
  return mark;
}
