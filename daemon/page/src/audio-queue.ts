// The page's one audio queue: sounds, alert sounds and speech play one after another,
// never over each other, in arrival order; at most 20 wait (the oldest waiting is dropped past that).

export interface QueuedSound {
  /** A URL on this origin: /assets/<name> or /tts/<hash>.wav. */
  url: string;
  volume: number;
}

/** Plays one sound and resolves when it ended, failed or could not start. */
export type PlaySound = (sound: QueuedSound) => Promise<void>;

export class AudioQueue {
  private readonly waiting: QueuedSound[] = [];
  private playing = false;

  constructor(
    private readonly play: PlaySound,
    private readonly maxWaiting = 20,
  ) {}

  get pending(): number {
    return this.waiting.length;
  }

  enqueue(sound: QueuedSound): void {
    this.waiting.push(sound);
    // A flood of gifts must not queue speech for an hour: the oldest waiting gives way.
    if (this.waiting.length > this.maxWaiting) this.waiting.splice(0, this.waiting.length - this.maxWaiting);
    if (!this.playing) void this.next();
  }

  private async next(): Promise<void> {
    this.playing = true;
    for (let sound = this.waiting.shift(); sound; sound = this.waiting.shift()) {
      try {
        await this.play(sound);
      } catch {
        // A sound that cannot play is skipped; the queue goes on.
      }
    }
    this.playing = false;
  }
}

/** Longest a sound may hold the queue when its length cannot be read (a stalled download). */
const UNKNOWN_LENGTH_MS = 30_000;

/**
 * Plays through an <audio> element: resolves on `ended` or `error`, when the browser refuses to play
 * (autoplay outside OBS), or a little after the sound's own length if `ended` never comes.
 */
export const playWithAudioElement: PlaySound = (sound) =>
  new Promise<void>((resolve) => {
    let timer: number | undefined;
    const audio = new Audio(sound.url);
    const done = () => {
      window.clearTimeout(timer);
      audio.onended = audio.onerror = audio.onloadedmetadata = null;
      resolve();
    };
    audio.volume = sound.volume;
    audio.onended = done;
    audio.onerror = done;
    timer = window.setTimeout(done, UNKNOWN_LENGTH_MS);
    audio.onloadedmetadata = () => {
      if (Number.isFinite(audio.duration)) {
        window.clearTimeout(timer);
        timer = window.setTimeout(done, audio.duration * 1000 + 2000);
      }
    };
    audio.play().catch(done);
  });
