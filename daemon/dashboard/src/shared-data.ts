// The data every view of the dashboard shares (overlays, media, rules) and how a view asks for it again.
import type { Overlay } from '../../../shared/protocol/index.js';
import type { RuleList } from '../../../shared/rules.js';
import type { ControlApi, MediaItem } from './api.js';

export interface Shared {
  api: ControlApi;
  overlays: Overlay[];
  media: MediaItem[];
  rules: RuleList;
  reloadOverlays(): Promise<void>;
  reloadMedia(): Promise<void>;
  reloadRules(): Promise<void>;
  /** Replaces one overlay in the shared list after a successful save. */
  overlaySaved(overlay: Overlay): void;
}
