// Alerts one after another: each shows for its duration, never two at once, in arrival order.
import type { TimerHandle, Timers } from '../../../shared/timers.js';

export interface QueuedAlert {
  text: string;
  /** Milliseconds on screen. */
  duration: number;
  /** A media file name, served at /assets/<name>. */
  image?: string;
  sound?: string;
  /** A media video played with the alert (in place of the image), muted when the widget says so. */
  video?: string;
  videoMuted?: boolean;
  /** The sender's picture and the gift's (https URLs from the platform), for alerts of events. */
  avatarUrl?: string;
  pictureUrl?: string;
}

interface AlertQueueOptions {
  /** Pause between two alerts so the first has left before the next appears. */
  gapMs?: number;
  /** Alerts waiting beyond this are dropped (the newest), so a gift flood cannot queue for hours. */
  maxWaiting?: number;
}

export class AlertQueue {
  private readonly waiting: QueuedAlert[] = [];
  private shown: QueuedAlert | undefined;
  private timer: TimerHandle | undefined;
  private readonly gapMs: number;
  private readonly maxWaiting: number;

  constructor(
    /** The page passes the browser's timers, tests a fake clock. */
    private readonly scheduler: Timers,
    /** Called with the alert to show, or undefined to hide it. */
    private readonly onChange: (alert: QueuedAlert | undefined) => void,
    options: AlertQueueOptions = {},
  ) {
    this.gapMs = options.gapMs ?? 250;
    this.maxWaiting = options.maxWaiting ?? 50;
  }

  /** The alert on screen, if any. */
  get current(): QueuedAlert | undefined {
    return this.shown;
  }

  get pending(): number {
    return this.waiting.length;
  }

  /** Returns false when the alert was dropped because too many are waiting. */
  enqueue(alert: QueuedAlert): boolean {
    if (this.waiting.length >= this.maxWaiting) return false;
    this.waiting.push(alert);
    if (this.shown === undefined && this.timer === undefined) this.next();
    return true;
  }

  /** Hides the current alert and drops the waiting ones. */
  clear(): void {
    if (this.timer !== undefined) this.scheduler.clearTimeout(this.timer);
    this.timer = undefined;
    this.waiting.length = 0;
    if (this.shown) {
      this.shown = undefined;
      this.onChange(undefined);
    }
  }

  private next(): void {
    const alert = this.waiting.shift();
    if (!alert) return;
    this.shown = alert;
    this.onChange(alert);
    this.timer = this.scheduler.setTimeout(() => this.hide(), alert.duration);
  }

  private hide(): void {
    this.shown = undefined;
    this.onChange(undefined);
    if (this.waiting.length === 0) {
      this.timer = undefined;
      return;
    }
    this.timer = this.scheduler.setTimeout(() => {
      this.timer = undefined;
      this.next();
    }, this.gapMs);
  }
}
