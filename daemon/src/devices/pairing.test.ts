import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../../test/support/fake-timers.js';
import { deviceCookie, newPairingCode, PairingService } from './pairing.js';
import type { DeviceStore } from './store.js';

const fakeDevices = {
  create: async () => ({ device: {}, token: 'tok' }),
} as unknown as DeviceStore;

describe('pairing codes', () => {
  it('are 10 characters of RFC 4648 base32', () => {
    for (let i = 0; i < 200; i++) expect(newPairingCode()).toMatch(/^[A-Z2-7]{10}$/);
  });

  it('are accepted in any case and with spaces around, once', () => {
    const service = new PairingService(fakeDevices, new FakeTimers(), () => 'tunnel.example');
    const offer = service.offer();
    expect(offer?.url).toBe(`https://tunnel.example/pair#${offer?.code}`);
    expect(service.request(` ${offer?.code.toLowerCase()} `, 'Phone', '1.2.3.4').ok).toBe(true);
    expect(service.request(offer?.code ?? '', 'Phone', '1.2.3.4')).toMatchObject({
      ok: false,
      code: 'forbidden',
    });
  });

  it('are not offered without a tunnel', () => {
    expect(new PairingService(fakeDevices, new FakeTimers(), () => undefined).offer()).toBeUndefined();
  });
});

describe('the poll', () => {
  it('hands the token out once after approval', async () => {
    const service = new PairingService(fakeDevices, new FakeTimers(), () => 'tunnel.example');
    const result = service.request(service.offer()?.code ?? '', 'Phone', '1.2.3.4');
    if (!result.ok) throw new Error('refused');
    expect(service.poll(result.pairingId)).toEqual({ state: 'waiting' });
    expect(await service.approve(result.pairingId)).toBe(true);
    expect(service.poll(result.pairingId)).toEqual({ state: 'approved', token: 'tok' });
    expect(service.poll(result.pairingId)).toEqual({ state: 'approved' });
  });
});

it('the device cookie is Secure, HttpOnly, SameSite=Strict and Path=/', () => {
  expect(deviceCookie('abc')).toBe('__Host-overlay_device=abc; Secure; HttpOnly; SameSite=Strict; Path=/');
});
