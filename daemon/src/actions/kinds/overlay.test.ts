import { describe, expect, it } from 'vitest';
import { fakeActionServices, fired } from '../../../../test/support/fakes/action-services.js';
import { overlay } from './overlay.js';

const OVERLAY = '4f1c2a3b-0000-4000-8000-000000000001';

describe('overlay action', () => {
  it("sends its command to the overlay's pages in the caller's turn", () => {
    const services = fakeActionServices();
    const result = overlay(services)(
      fired('overlay', {
        overlayId: OVERLAY,
        widgetId: 'alerts',
        command: 'show-alert',
        payload: { text: 'Bob sent a Rose' },
      }),
    );
    expect(result).toBeUndefined(); // not a promise: nothing waited for
    expect(services.sent).toEqual([
      {
        overlayId: OVERLAY,
        command: { command: 'show-alert', widgetId: 'alerts', payload: { text: 'Bob sent a Rose' } },
      },
    ]);
  });

  it('throws what sending threw, for the runner to log', () => {
    const services = fakeActionServices({
      sendCommand: () => {
        throw new Error('the payload is larger than 64 KiB');
      },
    });
    const run = () =>
      overlay(services)(
        fired('overlay', { overlayId: OVERLAY, widgetId: 'alerts', command: 'show-alert', payload: {} }),
      );
    expect(run).toThrow('the payload is larger than 64 KiB');
  });
});
