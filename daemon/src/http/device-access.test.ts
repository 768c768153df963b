import { describe, expect, it } from 'vitest';
import { deviceCookieValue, roleAllows } from './device-access.js';

describe('the device cookie', () => {
  it('is found among other cookies; a malformed value is empty, an absent one undefined', () => {
    expect(deviceCookieValue('a=1; __Host-overlay_device=abc_DEF-9; b=2')).toBe('abc_DEF-9');
    expect(deviceCookieValue('__Host-overlay_device="x y"')).toBe('');
    expect(deviceCookieValue('overlay_device=abc')).toBeUndefined();
    expect(deviceCookieValue(undefined)).toBeUndefined();
  });
});

describe('roles', () => {
  it('lets a moderator read status, history and the action log, send test events, test rules and skip or clear queues', () => {
    for (const [method, url] of [
      ['GET', '/api/status'],
      ['GET', '/api/session'],
      ['GET', '/api/sessions/12/minutes'],
      ['GET', '/api/leaderboard?scope=all&metric=points'],
      ['GET', '/api/actions/log'],
      ['POST', '/api/actions/queues/alerts/skip'],
      ['POST', '/api/actions/queues/alerts/clear'],
      ['POST', '/api/events?test=true'],
      ['POST', '/api/rules/test'],
      ['GET', '/api/rules'],
      ['GET', '/api/overlays'],
      ['HEAD', '/api/status'],
    ] as const)
      expect(roleAllows('moderator', method, url), `${method} ${url}`).toBe(true);
  });

  it('refuses a moderator everything else, whatever the case, slashes or encoding', () => {
    for (const [method, url] of [
      ['PUT', '/api/rules'],
      ['GET', '/api/overlays/0b7c2f4e-1111-4222-8333-944455556666'],
      ['GET', '/api/settings'],
      ['POST', '/api/overlays'],
      ['PUT', '/api/settings'],
      ['DELETE', '/api/test-events'],
      ['POST', '/api/actions/queues/a/b/skip'],
      ['GET', '/api/devices'],
      ['POST', '/API/RULES/TEST/x'],
    ] as const)
      expect(roleAllows('moderator', method, url), `${method} ${url}`).toBe(false);
  });

  it('lets an owner do what the admin key does except pairing, devices, the audit, backup and restore', () => {
    expect(roleAllows('owner', 'PUT', '/api/rules')).toBe(true);
    expect(roleAllows('owner', 'POST', '/api/overlays')).toBe(true);
    for (const url of [
      '/api/devices',
      '/api/devices/',
      '/API/Devices/abc',
      '/api/%64evices',
      '/api/pairings/offer',
      '/api/audit?after=3',
      '/api/backup',
      '/api/restore',
    ])
      expect(roleAllows('owner', 'GET', url), url).toBe(false);
  });
});
