import { describe, expect, it } from 'vitest';
import { tunnelState } from './state.js';

describe('tunnelState', () => {
  it('maps what Cloudflare reports to provisioned, active or inactive', () => {
    const at = '2026-01-01T00:00:00Z';
    expect(tunnelState({ status: 'inactive', conns_active_at: null })).toBe('provisioned');
    expect(tunnelState({ status: 'healthy', conns_active_at: at })).toBe('active');
    expect(tunnelState({ status: 'degraded', conns_active_at: at })).toBe('active');
    expect(tunnelState({ status: 'down', conns_active_at: at })).toBe('inactive');
    // Was connected once, reports no status change: it is not "never connected" any more.
    expect(tunnelState({ status: 'inactive', conns_active_at: at })).toBe('inactive');
  });
});
