import { describe, expect, it } from 'vitest';
import { mediaNamesOf, renameMedia } from './media-refs.js';

const init = {
  type: 'init',
  overlay: { name: 'o', width: 10, height: 10 },
  widgets: [
    { id: 'i', type: 'image', x: 0, y: 0, src: 'logo.png' },
    { id: 'a', type: 'alert', x: 0, y: 0, image: 'a/win.gif', sound: 'ding.mp3', video: 'clip.webm' },
    { id: 't', type: 'text', x: 0, y: 0, content: 'logo.png' },
  ],
};

describe('media of a public overlay', () => {
  it('finds the media of image and alert widgets, and of show-alert and play-sound commands, but not speech', () => {
    expect([...mediaNamesOf(init)].sort()).toEqual(['a/win.gif', 'clip.webm', 'ding.mp3', 'logo.png']);
    const alert = {
      type: 'overlay-command',
      command: 'show-alert',
      widgetId: 'a',
      payload: { text: 'hi', image: 'x.png' },
    };
    expect([...mediaNamesOf(alert)]).toEqual(['x.png']);
    const speech = {
      type: 'overlay-command',
      command: 'play-sound',
      widgetId: 'a',
      payload: { sound: `/tts/${'a'.repeat(64)}.wav` },
    };
    expect(mediaNamesOf(speech).size).toBe(0);
    expect(
      mediaNamesOf({
        type: 'overlay-command',
        command: 'set-text',
        widgetId: 'a',
        payload: { text: 'x.png' },
      }).size,
    ).toBe(0);
  });

  it('renames what it knows and leaves the rest (and the original) untouched', () => {
    const out = renameMedia(init, (name) =>
      name === 'logo.png' ? 'https://relay/v/s/o/assets/abc.png' : undefined,
    );
    expect(out.widgets[0]).toMatchObject({ src: 'https://relay/v/s/o/assets/abc.png' });
    expect(out.widgets[1]).toEqual(init.widgets[1]);
    expect(out.widgets[2]).toEqual(init.widgets[2]);
    expect(init.widgets[0]).toMatchObject({ src: 'logo.png' });
  });
});
