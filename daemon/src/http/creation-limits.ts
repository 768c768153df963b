// What the licence's tier lets the control API create (licence/licence-manager.ts gives it).
import type { LimitDecision } from '../licence/limits.js';

/** Refuses to create beyond the tier's limits; existing overlays and rules are never touched. */
export interface CreationLimits {
  canCreateOverlay(count: number): LimitDecision;
  canSaveRules(count: number, previousCount: number): LimitDecision;
  /** May an overlay become public (Premium only)? Without it nothing may: there is no licence to say Premium. */
  canPublish?(): LimitDecision;
}
