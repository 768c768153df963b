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

  it('says "waiting" while the device is written, then "approved" with the token', async () => {
    let written: (value: { device: object; token: string }) => void = () => {};
    const devices = {
      create: () => new Promise((resolve) => (written = resolve)),
    } as unknown as DeviceStore;
    const service = new PairingService(devices, new FakeTimers(), () => 'tunnel.example');
    const result = service.request(service.offer()?.code ?? '', 'Phone', '1.2.3.4');
    if (!result.ok) throw new Error('refused');
    const approving = service.approve(result.pairingId);
    // The phone polls while devices.json is being written: no answer it would stop polling on.
    expect(service.poll(result.pairingId)).toEqual({ state: 'waiting' });
    // Nor can the streamer answer twice meanwhile.
    expect(await service.approve(result.pairingId)).toBe(false);
    expect(service.refuse(result.pairingId)).toBe(false);
    written({ device: {}, token: 'tok' });
    expect(await approving).toBe(true);
    expect(service.poll(result.pairingId)).toEqual({ state: 'approved', token: 'tok' });
  });

  it('stays waiting when the device cannot be written, so the streamer can approve again', async () => {
    let fail = true;
    const devices = {
      create: async () => {
        if (fail) throw new Error('ENOSPC');
        return { device: {}, token: 'tok' };
      },
    } as unknown as DeviceStore;
    const service = new PairingService(devices, new FakeTimers(), () => 'tunnel.example');
    const result = service.request(service.offer()?.code ?? '', 'Phone', '1.2.3.4');
    if (!result.ok) throw new Error('refused');
    await expect(service.approve(result.pairingId)).rejects.toThrow('ENOSPC');
    expect(service.poll(result.pairingId)).toEqual({ state: 'waiting' });
    fail = false;
    expect(await service.approve(result.pairingId)).toBe(true);
    expect(service.poll(result.pairingId)).toEqual({ state: 'approved', token: 'tok' });
  });
});

it('the device cookie is Secure, HttpOnly, SameSite=Strict and Path=/', () => {
  expect(deviceCookie('abc')).toBe('__Host-overlay_device=abc; Secure; HttpOnly; SameSite=Strict; Path=/');
});
