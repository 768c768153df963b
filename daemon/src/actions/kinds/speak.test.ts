import { describe, expect, it, vi } from 'vitest';
import type { StoredSettings } from '../../../../shared/settings.js';
import { fakeActionServices, fired } from '../../../../test/support/fakes/action-services.js';
import { cut, speak } from './speak.js';
import type { SpeechRenderer } from './types.js';

const OVERLAY = '4f1c2a3b-0000-4000-8000-000000000001';
type Tts = StoredSettings['tts'];
const TTS: Tts = { enabled: true, maxChars: 200, blockedWords: [], userCooldownMs: 0 };

function setup(tts: Partial<Tts> = {}) {
  const render = vi.fn<SpeechRenderer['render']>(async () => 'a1b2');
  const services = fakeActionServices({ speech: { render }, tts: () => ({ ...TTS, ...tts }) });
  return { services, render, run: speak(services) };
}

const said = (
  text: string,
  sender = 'viewer',
  extra: { voice?: string; rate?: number; volume?: number } = {},
) => fired('speak', { text, overlayId: OVERLAY, sender, ...extra });

describe('speak action', () => {
  it("renders the text and sends it to the overlay page's audio queue", async () => {
    const { services, render, run } = setup();
    await run(said('Bob says hi', 'bob', { voice: 'en', rate: 1.5, volume: 0.5 }));
    expect(render).toHaveBeenCalledWith('Bob says hi', { voice: 'en', rate: 1.5 });
    expect(services.sent).toEqual([
      {
        overlayId: OVERLAY,
        command: {
          command: 'play-sound',
          widgetId: '@page',
          payload: { sound: '/tts/a1b2.wav', volume: 0.5 },
        },
      },
    ]);
  });

  it('plays at full volume unless the action says otherwise', async () => {
    const { services, run } = setup();
    await run(said('hello'));
    expect(services.sent[0]?.command.payload).toMatchObject({ volume: 1 });
  });

  it('fails, saying so, without a speech engine or with speech turned off', async () => {
    await expect(speak(fakeActionServices())(said('hi'))).rejects.toThrow('speech is not set up');
    const { run, render } = setup({ enabled: false });
    await expect(run(said('hi'))).rejects.toThrow('speech is turned off in the settings');
    expect(render).not.toHaveBeenCalled();
  });

  it('drops a text with a blocked word, even one hidden by markup, and says nothing', async () => {
    const { services, render, run } = setup({ blockedWords: ['badword'] });
    await expect(run(said('you bad[[]]word'))).rejects.toThrow(
      'dropped: the text has the blocked word "badword"',
    );
    expect(render).not.toHaveBeenCalled();
    expect(services.sent).toEqual([]);
  });

  it('gives the engine plain text only, cut to maxChars at a word', async () => {
    const { render, run } = setup({ maxChars: 12 });
    await run(said('<speak>hello</speak> there streamer'));
    expect(render).toHaveBeenCalledWith('speakhello/s', expect.anything());
    render.mockClear();
    await run(said('hello there streamer'));
    expect(render.mock.calls[0]?.[0]).toBe('hello there');
    await expect(run(said('[[]]'))).rejects.toThrow('nothing to say');
  });

  it('drops a viewer spoken for within userCooldownMs (any letter case); others still speak', async () => {
    const { services, run } = setup({ userCooldownMs: 10_000 });
    await run(said('first', 'Bob'));
    await expect(run(said('again', 'bob'))).rejects.toThrow(
      'dropped: bob was spoken for less than 10000 ms ago',
    );
    await run(said('mine', 'carol'));
    services.clock.advance(10_000);
    await run(said('later', 'BOB'));
    expect(services.sent).toHaveLength(3);
  });

  it('sends nothing when the runner closed while the text was rendering', async () => {
    let finish: (hash: string) => void = () => {};
    const services = fakeActionServices({
      speech: { render: () => new Promise<string>((resolve) => (finish = resolve)) },
      tts: () => TTS,
    });
    const pending = speak(services)(said('slow'));
    services.shutDown();
    finish('a1b2');
    await pending;
    expect(services.sent).toEqual([]);
  });
});

describe('cut', () => {
  it('keeps whole code points and ends at a word near the cut', () => {
    expect(cut('short', 10)).toBe('short');
    expect(cut('hello wonderful world', 18)).toBe('hello wonderful');
    expect(cut('abcdefghij', 4)).toBe('abcd');
    expect(cut('🎉🎉🎉', 2)).toBe('🎉🎉');
  });
});
