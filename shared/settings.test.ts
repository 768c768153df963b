// The secrets of the settings come from the schema: a field marked `secret(…)` is hidden from GET, kept
// by a PUT that leaves it out, and stripped from a backup without secrets, including one added later.
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  applySettingsInput,
  keepMissingSecrets,
  type SchemaNode,
  SECRET_SETTINGS,
  SettingsInput,
  StoredSettings,
  secret,
  secretPaths,
  settingsView,
  withoutSecrets,
} from './settings.js';

const stored = v.parse(StoredSettings, {
  obs: { password: 'obs-secret' },
  youtube: { apiKey: 'AIzaSyKey_123' },
  tts: { maxChars: 50 },
});

describe('secrets of the settings', () => {
  it('are listed from the schema, and one marked later is found wherever it is', () => {
    expect(SECRET_SETTINGS).toEqual([
      ['obs', 'password'],
      ['youtube', 'apiKey'],
    ]);
    const later = v.object({
      plain: v.optional(v.string()),
      kick: v.optional(v.object({ token: v.optional(secret(v.string())), name: v.string() })),
    });
    expect(secretPaths(later as unknown as SchemaNode)).toEqual([['kick', 'token']]);
  });

  it('never appear in what GET answers or in a backup without secrets', () => {
    const view = JSON.stringify(settingsView(stored));
    const stripped = JSON.stringify(withoutSecrets(stored));
    for (const text of [view, stripped]) {
      expect(text).not.toContain('obs-secret');
      expect(text).not.toContain('AIzaSyKey_123');
    }
    expect(settingsView(stored)).toMatchObject({
      obs: { password: { set: true } },
      youtube: { apiKey: { set: true } },
    });
    expect(withoutSecrets(stored).tts.maxChars).toBe(50);
  });

  it('are kept by a PUT that leaves them out, and by a restore of a backup that lacks them', () => {
    const partial = applySettingsInput(v.parse(SettingsInput, { tts: { maxChars: 9 } }), stored);
    expect(partial.obs.password).toBe('obs-secret');
    expect(partial.youtube.apiKey).toBe('AIzaSyKey_123');
    const cleared = applySettingsInput(v.parse(SettingsInput, { obs: { password: null } }), stored);
    expect(cleared.obs.password).toBeUndefined();
    expect(cleared.youtube.apiKey).toBe('AIzaSyKey_123');
    const restored = keepMissingSecrets(
      withoutSecrets({ ...stored, tts: { ...stored.tts, maxChars: 7 } }),
      stored,
    );
    expect(restored).toMatchObject({
      obs: { password: 'obs-secret' },
      youtube: { apiKey: 'AIzaSyKey_123' },
      tts: { maxChars: 7 },
    });
  });
});
