// Draws an overlay's widgets with plain DOM and applies stream events and commands to them.

import { describeEvent } from '../../../shared/describe-event.js';
import { giftValueText } from '../../../shared/money.js';
import {
  type OverlayCommand,
  type OverlayMeta,
  type Platform,
  PlaySoundPayload,
  parseWith,
  SetTextPayload,
  ShowAlertPayload,
  type StreamEvent,
  type Widget,
  type WidgetOf,
} from '../../../shared/protocol/index.js';
import { hostTimers } from '../../../shared/timers.js';
import { alertAnnounces, eventListShows } from '../../../shared/widget-reactions.js';
import { AlertQueue, type QueuedAlert } from './alert-queue.js';
import { AudioQueue, type PlaySound, playWithAudioElement } from './audio-queue.js';
import { pushBounded } from './feed.js';
import { platformMark } from './platform-mark.js';

const PAGE_TIMERS = hostTimers({
  now: () => performance.now(),
  setTimeout: (callback, ms) => window.setTimeout(callback, ms),
  clearTimeout: (handle: number) => window.clearTimeout(handle),
});

/** Where media names resolve: the daemon's /assets/, or a viewer page's own assets beside its address. */
let assetBase = '/assets/';
export function setAssetBase(base: string): void {
  assetBase = base;
}

/** /assets/<name>, each path segment encoded; a name that is already a full http(s) URL is used as it is. */
export function assetUrl(name: string): string {
  if (/^https?:\/\//i.test(name)) return name;
  return `${assetBase}${name.split('/').map(encodeURIComponent).join('/')}`;
}

/** Scale that fits the overlay into the viewport without enlarging it. */
export function fitScale(overlay: OverlayMeta, viewport: { width: number; height: number }): number {
  if (viewport.width <= 0 || viewport.height <= 0) return 1;
  return Math.min(1, viewport.width / overlay.width, viewport.height / overlay.height);
}

interface ChatLine {
  platform: Platform;
  who: string;
  text: string;
}

interface EventLine {
  platform: Platform;
  text: string;
}

/** What the page remembers per widget between `overlay-update`s (the daemon keeps the rest). */
interface Runtime {
  lines: ChatLine[];
  events: EventLine[];
  alerts?: AlertQueue;
  text?: string;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  // textContent only: event text comes from viewers and is never parsed as HTML.
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A sound's URL: speech the daemon rendered is already one (/tts/…), a media name is an asset. */
function soundUrl(name: string): string {
  return name.startsWith('/tts/') ? name : assetUrl(name);
}

/** The widget id that addresses the page itself rather than a widget. */
const PAGE = '@page';

/** Diamonds as a person reads them: 1,000 rather than 1000. */
const DIAMONDS = new Intl.NumberFormat('en-US');

/** A picture URL from the platform, only over https. */
function httpsUrl(value: unknown): string | undefined {
  return typeof value === 'string' && value.startsWith('https://') && value.length <= 2048
    ? value
    : undefined;
}

/** Whether the daemon sent the same widget again (same id, same settings and kept state). */
function sameWidget(a: Widget | undefined, b: Widget): boolean {
  return a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

export class OverlayView {
  private overlay: OverlayMeta | undefined;
  private widgets: Widget[] = [];
  private readonly elements = new Map<string, HTMLElement>();
  private readonly runtime = new Map<string, Runtime>();
  /** Every sound of the page, speech included, one after another. */
  private readonly audio: AudioQueue;

  constructor(
    private readonly stage: HTMLElement,
    play: PlaySound = playWithAudioElement,
  ) {
    this.audio = new AudioQueue(play);
    window.addEventListener('resize', () => this.fit());
  }

  /**
   * Takes the whole state (interface §6.2: `init` and `overlay-update` are full replacements) but
   * redraws only the widgets that differ, by id: a like storm sends an update for every goal step, and
   * rebuilding an alert on screen would restart its animation (a video from its first frame).
   */
  replace(overlay: OverlayMeta, widgets: Widget[]): void {
    const before = new Map(this.widgets.map((w) => [w.id, w]));
    const changed = new Set(
      widgets.filter((w) => !sameWidget(before.get(w.id), w) || !this.elements.has(w.id)).map((w) => w.id),
    );
    this.overlay = overlay;
    this.widgets = widgets;
    for (const [id, rt] of this.runtime) {
      const widget = widgets.find((w) => w.id === id);
      if (!widget) {
        rt.alerts?.clear();
        this.runtime.delete(id);
      } else if (widget.type === 'text' && changed.has(id)) {
        // New content from the daemon wins over an earlier set-text.
        delete rt.text;
      }
    }
    this.stage.style.width = `${overlay.width}px`;
    this.stage.style.height = `${overlay.height}px`;
    this.fit();
    const previous = new Map(this.elements);
    this.elements.clear();
    const nodes = widgets.map((widget) => {
      const node = (changed.has(widget.id) ? undefined : previous.get(widget.id)) ?? this.build(widget);
      this.elements.set(widget.id, node);
      return node;
    });
    // Nodes that stay are never moved when their order holds: a node taken out of the page and put back
    // restarts its animations too.
    const staying = new Set<Node>(nodes);
    for (const child of [...this.stage.childNodes]) if (!staying.has(child)) child.remove();
    let cursor = this.stage.firstChild;
    for (const node of nodes) {
      if (node === cursor) cursor = cursor.nextSibling;
      else this.stage.insertBefore(node, cursor);
    }
  }

  /** `stale`: a replayed event from more than a minute ago: it updates the lists, but raises no alert. */
  onStreamEvent(event: StreamEvent, stale = false): void {
    for (const widget of this.widgets) {
      const rt = this.rt(widget.id);
      if (widget.type === 'chat' && event.type === 'chat') {
        pushBounded(
          rt.lines,
          {
            platform: event.platform,
            who: event.user.nickname || event.user.uniqueId,
            text: event.data.comment,
          },
          widget.maxMessages,
        );
        this.redraw(widget);
      } else if (widget.type === 'event-list' && eventListShows(widget, event.type)) {
        pushBounded(rt.events, { platform: event.platform, text: describeEvent(event) }, widget.maxEvents);
        this.redraw(widget);
      } else if (widget.type === 'alert' && !stale && alertAnnounces(widget, event.type)) {
        // Only the event types the widget lists: a rule's `show-alert` for the same event would otherwise alert twice.
        const avatarUrl = httpsUrl(event.user.profilePictureUrl);
        const pictureUrl = event.type === 'gift' ? httpsUrl(event.data.giftPictureUrl) : undefined;
        this.alertQueue(widget).enqueue({
          text: describeEvent(event),
          duration: widget.duration,
          ...(widget.image ? { image: widget.image } : {}),
          ...(widget.sound ? { sound: widget.sound } : {}),
          ...(widget.video ? { video: widget.video, videoMuted: widget.videoMuted === true } : {}),
          ...(avatarUrl ? { avatarUrl } : {}),
          ...(pictureUrl ? { pictureUrl } : {}),
        });
      }
    }
  }

  /** interface §6.2 rule 2: an unknown command, or one for an unknown widget, is ignored silently. */
  onCommand(message: OverlayCommand, stale = false): void {
    const { command, payload } = message;
    // A replayed alert or sound from more than a minute ago would only confuse: skipped.
    if (stale && (command === 'show-alert' || command === 'play-sound')) return;
    if (message.widgetId === PAGE) {
      if (command === 'play-sound') this.playSound(payload);
      return;
    }
    const widget = this.widgets.find((w) => w.id === message.widgetId);
    if (!widget) return;
    if (command === 'show-alert' && widget.type === 'alert') {
      const parsed = parseWith(ShowAlertPayload, payload);
      if (!parsed.ok) return;
      const { text, duration, image, sound, video } = parsed.value;
      const pickedImage = image ?? widget.image;
      const pickedSound = sound ?? widget.sound;
      // A command's own image replaces the widget's video; its own video replaces both.
      const pickedVideo = video ?? (image ? undefined : widget.video);
      this.alertQueue(widget).enqueue({
        text,
        duration,
        ...(pickedImage ? { image: pickedImage } : {}),
        ...(pickedSound ? { sound: pickedSound } : {}),
        ...(pickedVideo ? { video: pickedVideo, videoMuted: widget.videoMuted === true } : {}),
      });
    } else if (command === 'play-sound') {
      this.playSound(payload);
    } else if (command === 'set-text' && widget.type === 'text') {
      const parsed = parseWith(SetTextPayload, payload);
      if (!parsed.ok) return;
      this.rt(widget.id).text = parsed.value.text;
      this.redraw(widget);
    } else if (command === 'reset') {
      const rt = this.rt(widget.id);
      if (widget.type === 'chat') rt.lines.length = 0;
      else if (widget.type === 'event-list') rt.events.length = 0;
      else if (widget.type === 'alert') {
        // The queue redraws the widget itself when an alert was on screen; otherwise nothing changes.
        rt.alerts?.clear();
        return;
      } else if (widget.type === 'goal') this.widgets = this.swap({ ...widget, current: 0 });
      else if (widget.type === 'counter') this.widgets = this.swap({ ...widget, value: 0 });
      else if (widget.type === 'top-gifters') this.widgets = this.swap({ ...widget, entries: [] });
      else return;
      this.redraw(this.widgets.find((w) => w.id === widget.id) ?? widget);
    }
  }

  /** `play-sound` for the page or a widget: into the page's one audio queue. */
  private playSound(payload: unknown): void {
    const parsed = parseWith(PlaySoundPayload, payload);
    if (parsed.ok) this.audio.enqueue({ url: soundUrl(parsed.value.sound), volume: parsed.value.volume });
  }

  private swap(next: Widget): Widget[] {
    return this.widgets.map((w) => (w.id === next.id ? next : w));
  }

  private fit(): void {
    if (!this.overlay) return;
    const scale = fitScale(this.overlay, { width: window.innerWidth, height: window.innerHeight });
    this.stage.style.transform = scale < 1 ? `scale(${scale})` : '';
  }

  private rt(id: string): Runtime {
    let rt = this.runtime.get(id);
    if (!rt) {
      rt = { lines: [], events: [] };
      this.runtime.set(id, rt);
    }
    return rt;
  }

  private alertQueue(widget: WidgetOf<'alert'>): AlertQueue {
    const rt = this.rt(widget.id);
    rt.alerts ??= new AlertQueue(PAGE_TIMERS, (alert) => {
      if (alert?.sound) this.audio.enqueue({ url: soundUrl(alert.sound), volume: 1 });
      const current = this.widgets.find((w) => w.id === widget.id);
      if (current?.type === 'alert') this.redrawAlert(current);
    });
    return rt.alerts;
  }

  /** An alert widget's box stays as it is: only its card changes (the one now shown, or none). */
  private redrawAlert(widget: WidgetOf<'alert'>): void {
    const box = this.elements.get(widget.id);
    if (!box) return;
    const card = this.alertCard(widget, this.runtime.get(widget.id)?.alerts?.current);
    if (card) box.replaceChildren(card);
    else box.replaceChildren();
  }

  private redraw(widget: Widget): void {
    const old = this.elements.get(widget.id);
    if (!old) return;
    const node = this.build(widget);
    old.replaceWith(node);
    this.elements.set(widget.id, node);
  }

  private build(widget: Widget): HTMLElement {
    const box = el('div', `widget widget-${widget.type}`);
    box.dataset.widgetId = widget.id;
    box.dataset.widgetType = widget.type;
    box.style.left = `${widget.x}px`;
    box.style.top = `${widget.y}px`;
    if (widget.width !== undefined) box.style.width = `${widget.width}px`;
    if (widget.height !== undefined) box.style.height = `${widget.height}px`;
    if ('color' in widget && widget.color) box.style.color = widget.color;
    if ('fontSize' in widget && widget.fontSize) box.style.fontSize = `${widget.fontSize}px`;
    const rt = this.runtime.get(widget.id);
    switch (widget.type) {
      case 'text':
        box.textContent = rt?.text ?? widget.content;
        if (widget.fontFamily) box.style.fontFamily = widget.fontFamily;
        break;
      case 'image': {
        const img = el('img');
        img.src = assetUrl(widget.src);
        img.alt = '';
        box.append(img);
        break;
      }
      case 'alert': {
        const card = this.alertCard(widget, rt?.alerts?.current);
        if (card) box.append(card);
        break;
      }
      case 'goal': {
        const share = Math.min(1, widget.current / widget.target);
        const bar = el('div', 'goal-bar');
        const fill = el('div', 'goal-fill');
        fill.style.width = `${(share * 100).toFixed(2)}%`;
        if (widget.color) fill.style.background = widget.color;
        bar.append(fill);
        box.append(
          el('div', 'goal-title', widget.title),
          bar,
          el('div', 'goal-count', `${widget.current} / ${widget.target}`),
        );
        box.dataset.current = String(widget.current);
        break;
      }
      case 'chat':
        // Without a height its box ends at the canvas's bottom edge: the newest lines stay on screen.
        if (widget.height === undefined && this.overlay)
          box.style.maxHeight = `${Math.max(0, this.overlay.height - widget.y)}px`;
        for (const line of rt?.lines ?? []) {
          const row = el('div', 'chat-line');
          const mark = platformMark(line.platform);
          if (mark) row.append(mark);
          row.append(el('span', 'chat-user', line.who), el('span', 'chat-text', ` ${line.text}`));
          box.append(row);
        }
        break;
      case 'counter':
        box.append(
          el('span', 'counter-label', widget.label ? `${widget.label} ` : ''),
          el('span', 'counter-value', String(widget.value)),
        );
        box.dataset.value = String(widget.value);
        break;
      case 'event-list':
        for (const line of rt?.events ?? []) {
          const row = el('div', 'event-line');
          const mark = platformMark(line.platform);
          if (mark) row.append(mark);
          row.append(line.text);
          box.append(row);
        }
        break;
      case 'top-gifters': {
        const list = el('ol', 'gifters');
        for (const entry of widget.entries.slice(0, widget.maxEntries)) {
          list.append(
            el(
              'li',
              'gifter',
              widget.metric && widget.metric !== 'diamonds'
                ? `${entry.nickname || entry.uniqueId} — ${DIAMONDS.format(entry.value ?? 0)} ${widget.metric}`
                : `${entry.nickname || entry.uniqueId} — ${giftValueText(entry.platform, entry.diamonds, entry.currency)}`,
            ),
          );
        }
        box.append(list);
        break;
      }
    }
    return box;
  }

  /**
   * The alert on screen: a card in the widget's style (`pop` by default) that enters, stays for its
   * duration and leaves (one CSS animation over `--alert-ms`), with the sender's picture and the
   * gift's when the event carries them, and the widget's image.
   */
  private alertCard(widget: WidgetOf<'alert'>, alert: QueuedAlert | undefined): HTMLElement | undefined {
    if (!alert) return undefined;
    const card = el('div', `alert-card alert-${widget.style ?? 'pop'}`);
    card.style.setProperty('--alert-ms', `${alert.duration}ms`);
    const pictures = el('div', 'alert-pictures');
    const picture = (src: string, kind: string) => {
      const img = el('img', `alert-${kind}`);
      img.src = src;
      img.alt = '';
      img.referrerPolicy = 'no-referrer';
      pictures.append(img);
    };
    if (alert.avatarUrl) picture(alert.avatarUrl, 'avatar');
    if (alert.video) {
      const video = el('video', 'alert-video');
      video.src = assetUrl(alert.video);
      video.autoplay = true;
      video.muted = alert.videoMuted === true;
      video.playsInline = true;
      video.preload = 'auto';
      // A browser that refuses sound without a click (outside OBS) still shows the video, muted.
      video.play().catch(() => {
        video.muted = true;
        video.play().catch(() => {});
      });
      pictures.append(video);
    } else if (alert.image) picture(assetUrl(alert.image), 'image');
    if (alert.pictureUrl) picture(alert.pictureUrl, 'gift');
    if (pictures.childElementCount > 0) card.append(pictures);
    const text = el('div', 'alert-text', alert.text);
    text.dataset.alert = '';
    card.append(text);
    return card;
  }
}
