import { describe, expect, it } from 'vitest';
import { allows, changesSecrets, homeTab, tabsFor } from './roles.js';

const ids = (tabs: readonly { id: string }[]) => tabs.map((t) => t.id);

describe('what each signer is offered', () => {
  it('gives a moderator Status, Actions, Test events and History, in that order on every screen', () => {
    expect(ids(tabsFor('moderator', true))).toEqual(['status', 'actions', 'test', 'history']);
    expect(ids(tabsFor('moderator', false))).toEqual(['status', 'actions', 'test', 'history']);
    expect(homeTab(tabsFor('moderator', false))).toBe('status');
  });

  it('gives the admin key and an owner every view, the phone ones first on a phone', () => {
    for (const signer of ['admin', 'owner'] as const) {
      expect(ids(tabsFor(signer, false))).toEqual([
        'overlays',
        'rules',
        'media',
        'test',
        'sources',
        'actions',
        'history',
        'settings',
        'status',
      ]);
      expect(ids(tabsFor(signer, true)).slice(0, 4)).toEqual(['status', 'actions', 'test', 'history']);
      expect(tabsFor(signer, true)).toHaveLength(9);
      expect(homeTab(tabsFor(signer, true))).toBe('overlays');
    }
  });

  it('lets a moderator read status, history and the action log, send test events, test a rule, skip and clear', () => {
    for (const [method, path] of [
      ['GET', '/api/status'],
      ['GET', '/api/session'],
      ['GET', '/api/clients'],
      ['GET', '/api/sessions'],
      ['GET', '/api/sessions/4/minutes'],
      ['GET', '/api/sessions/4/events.csv'],
      ['GET', '/api/leaderboard?scope=all&metric=diamonds&limit=10'],
      ['GET', '/api/actions/log'],
      ['GET', '/api/actions/queues'],
      ['POST', '/api/actions/queues/camera/skip'],
      ['POST', '/api/actions/queues/camera/clear'],
      ['POST', '/api/events?test=true'],
      ['POST', '/api/rules/test'],
      ['GET', '/api/overlays'],
      ['GET', '/api/rules'],
    ] as const) {
      expect(allows('moderator', method, path), `${method} ${path}`).toBe(true);
    }
  });

  it('refuses a moderator every change but those, one overlay, devices, settings and media', () => {
    for (const [method, path] of [
      ['GET', '/api/overlays/a'],
      ['PUT', '/api/rules'],
      ['PUT', '/api/overlays/a'],
      ['DELETE', '/api/test-events'],
      ['GET', '/api/settings'],
      ['GET', '/api/media'],
      ['GET', '/api/devices'],
      ['POST', '/api/pairings/offer'],
      ['GET', '/api/actions/queues/camera/skip'],
      ['POST', '/api/actions/queues/camera/skip/more'],
    ] as const) {
      expect(allows('moderator', method, path), `${method} ${path}`).toBe(false);
    }
  });

  it('lets an owner do what the admin key does but pairing, devices, the audit, backups and restores', () => {
    expect(allows('owner', 'PUT', '/api/rules')).toBe(true);
    expect(allows('owner', 'PUT', '/api/settings')).toBe(true);
    expect(allows('owner', 'DELETE', '/api/test-events')).toBe(true);
    for (const [method, path] of [
      ['POST', '/api/pairings/offer'],
      ['GET', '/api/pairings'],
      ['GET', '/api/devices'],
      ['DELETE', '/api/devices/d1'],
      ['GET', '/api/audit?after=1'],
      ['GET', '/api/backup'],
      ['POST', '/api/restore'],
    ] as const) {
      expect(allows('owner', method, path), `${method} ${path}`).toBe(false);
      expect(allows('admin', method, path)).toBe(true);
    }
  });

  it('keeps changing secrets to the admin key', () => {
    expect(changesSecrets('admin')).toBe(true);
    expect(changesSecrets('owner')).toBe(false);
    expect(changesSecrets('moderator')).toBe(false);
  });
});
