// The property panel of the selected widget: the fields of its kind, then its box, each with the schema's
// message beside it.
import type { ComponentChildren } from 'preact';
import type { AlertStyle, Widget } from '../../../../shared/protocol/index.js';
import type { MediaItem } from '../api.js';
import { isAudio, isImage, isVideo } from '../media-kinds.js';
import {
  CheckProp,
  ChoiceProp,
  ColourProp,
  EventTypesProp,
  FontProp,
  MediaProp,
  NumberProp,
  SourceProp,
  TextProp,
  type WidgetFields,
  withField,
} from './property-fields.js';

interface PanelProps {
  widget: Widget;
  media: MediaItem[];
  /** Schema message for a field of this widget, by field name. */
  errorFor: (field: string) => string | undefined;
  /** `key` makes a run of edits to one field a single undo step. */
  onChange: (next: Widget, key: string) => void;
}

const ALERT_STYLE_CHOICES = [
  { value: 'pop', label: 'Pop: a card that springs in' },
  { value: 'slide', label: 'Slide: a banner from the left' },
  { value: 'plain', label: 'Plain: text that fades' },
] as const satisfies readonly { value: AlertStyle; label: string }[];

/** The fields only this kind of widget has. */
/**
 * A goal's progress or a counter's value: the stream's, shown as it goes, not a field. A layout save
 * never changes it (the daemon keeps the value in force); a `reset` command or rule sets it to 0.
 */
function LiveValue(props: { label: string; value: number }) {
  return (
    <p class="live-value" data-live-value>
      {props.label}: <strong>{props.value}</strong>{' '}
      <span class="muted">(follows the stream; a reset sets it to 0)</span>
    </p>
  );
}

function KindFields(props: { f: WidgetFields; media: MediaItem[] }): ComponentChildren {
  const { f } = props;
  const w = f.widget;
  const images = props.media.filter((m) => isImage(m.name));
  const sounds = props.media.filter((m) => isAudio(m.name));
  const videos = props.media.filter((m) => isVideo(m.name));
  const fontSize = (
    sized: Extract<Widget, { type: 'text' | 'alert' | 'chat' | 'counter' }>,
    max?: number,
  ) => (
    <NumberProp
      f={f}
      name="fontSize"
      label="Font size (px)"
      value={sized.fontSize}
      set={(v) => withField(sized, 'fontSize', v)}
      optional
      min={1}
      {...(max !== undefined ? { max } : {})}
    />
  );
  const colour = (coloured: Exclude<Widget, { type: 'image' }>) => (
    <ColourProp f={f} value={coloured.color} set={(v) => withField(coloured, 'color', v)} />
  );
  switch (w.type) {
    case 'text':
      return (
        <>
          <TextProp
            f={f}
            name="content"
            label="Text"
            value={w.content}
            set={(v) => ({ ...w, content: v })}
            multiline
          />
          <FontProp f={f} value={w.fontFamily} set={(v) => withField(w, 'fontFamily', v)} />
          {fontSize(w, 1000)}
          {colour(w)}
        </>
      );
    case 'image':
      return (
        <MediaProp
          f={f}
          name="src"
          label="Image"
          value={w.src}
          items={images}
          set={(v) => ({ ...w, src: v ?? '' })}
          optional={false}
        />
      );
    case 'alert':
      return (
        <>
          <ChoiceProp
            f={f}
            name="style"
            label="Style"
            value={w.style ?? 'pop'}
            choices={ALERT_STYLE_CHOICES}
            set={(style) => ({ ...w, style })}
          />
          <NumberProp
            f={f}
            name="duration"
            label="Duration (ms)"
            value={w.duration}
            set={(v) => ({ ...w, duration: v ?? Number.NaN })}
            min={100}
            max={60000}
            step={100}
          />
          <MediaProp
            f={f}
            name="image"
            label="Image"
            value={w.image}
            items={images}
            set={(v) => withField(w, 'image', v)}
            optional
          />
          <MediaProp
            f={f}
            name="sound"
            label="Sound"
            value={w.sound}
            items={sounds}
            set={(v) => withField(w, 'sound', v)}
            optional
          />
          <MediaProp
            f={f}
            name="video"
            label="Video (replaces the image)"
            value={w.video}
            items={videos}
            set={(v) => withField(w, 'video', v)}
            optional
          />
          {w.video && (
            <CheckProp
              f={f}
              name="videoMuted"
              label="Play the video without its sound"
              value={w.videoMuted === true}
              set={(on) => withField(w, 'videoMuted', on || undefined)}
            />
          )}
          {fontSize(w)}
          {colour(w)}
          <EventTypesProp
            f={f}
            legend="Announce these events by itself (besides show-alert commands)"
            name="events"
            value={w.events}
            set={(list) => withField(w, 'events', list)}
          />
        </>
      );
    case 'goal':
      return (
        <>
          <TextProp f={f} name="title" label="Title" value={w.title} set={(v) => ({ ...w, title: v })} />
          <SourceProp f={f} value={w.source} set={(source) => (source ? { ...w, source } : w)} />
          <NumberProp
            f={f}
            name="target"
            label="Target"
            value={w.target}
            set={(v) => ({ ...w, target: v ?? Number.NaN })}
            min={1}
          />
          <LiveValue label="Progress so far" value={w.current} />
          {colour(w)}
        </>
      );
    case 'chat':
      return (
        <>
          <NumberProp
            f={f}
            name="maxMessages"
            label="Messages shown"
            value={w.maxMessages}
            set={(v) => ({ ...w, maxMessages: v ?? Number.NaN })}
            min={1}
            max={100}
          />
          {fontSize(w)}
          {colour(w)}
        </>
      );
    case 'counter':
      return (
        <>
          <TextProp f={f} name="label" label="Label" value={w.label} set={(v) => ({ ...w, label: v })} />
          <SourceProp
            f={f}
            value={w.source}
            noneLabel="Nothing (set by commands)"
            set={(source) => withField(w, 'source', source)}
          />
          <LiveValue label="Value" value={w.value} />
          {fontSize(w)}
          {colour(w)}
        </>
      );
    case 'event-list':
      return (
        <>
          <NumberProp
            f={f}
            name="maxEvents"
            label="Events shown"
            value={w.maxEvents}
            set={(v) => ({ ...w, maxEvents: v ?? Number.NaN })}
            min={1}
            max={100}
          />
          <EventTypesProp
            f={f}
            legend="Event types (none ticked: all)"
            name="eventTypes"
            value={w.eventTypes}
            set={(list) => withField(w, 'eventTypes', list)}
          />
          {colour(w)}
        </>
      );
    case 'top-gifters':
      return (
        <>
          <NumberProp
            f={f}
            name="maxEntries"
            label="Entries shown"
            value={w.maxEntries}
            set={(v) => ({ ...w, maxEntries: v ?? Number.NaN })}
            min={1}
            max={50}
          />
          <ChoiceProp
            f={f}
            name="scope"
            label="Ranks"
            value={(w.scope ?? w.metric) ? (w.scope ?? 'session') : 'widget'}
            choices={RANKING_SCOPES}
            set={(scope) =>
              scope === 'widget'
                ? withField(withField(w, 'scope', undefined), 'metric', undefined)
                : { ...w, scope }
            }
          />
          {(w.scope || w.metric) && (
            <ChoiceProp
              f={f}
              name="metric"
              label="By"
              value={w.metric ?? 'diamonds'}
              choices={RANKING_METRIC_CHOICES}
              set={(metric) => ({ ...w, scope: w.scope ?? 'session', metric })}
            />
          )}
          {colour(w)}
        </>
      );
  }
}

const RANKING_SCOPES = [
  { value: 'widget', label: 'gifts since the widget was reset' },
  { value: 'session', label: 'this stream (from the event history)' },
  { value: 'all', label: 'all streams (from the event history)' },
] as const;
const RANKING_METRIC_CHOICES = [
  { value: 'diamonds', label: 'gift value (diamonds, bits, Super Chats)' },
  { value: 'likes', label: 'likes' },
  { value: 'chats', label: 'chat messages' },
  { value: 'points', label: 'points' },
] as const;

/** Where the widget sits on the canvas, and its size (empty: as large as its content). */
function BoxFields(props: { f: WidgetFields }) {
  const { f } = props;
  const w = f.widget;
  return (
    <>
      <NumberProp f={f} name="x" label="X (px)" value={w.x} set={(v) => ({ ...w, x: v ?? Number.NaN })} />
      <NumberProp f={f} name="y" label="Y (px)" value={w.y} set={(v) => ({ ...w, y: v ?? Number.NaN })} />
      <NumberProp
        f={f}
        name="width"
        label="Width (px)"
        value={w.width}
        set={(v) => withField(w, 'width', v)}
        optional
        min={0}
      />
      <NumberProp
        f={f}
        name="height"
        label="Height (px)"
        value={w.height}
        set={(v) => withField(w, 'height', v)}
        optional
        min={0}
      />
    </>
  );
}

export function Properties(props: PanelProps) {
  const f: WidgetFields = { widget: props.widget, errorFor: props.errorFor, onChange: props.onChange };
  return (
    <div class="properties">
      <p class="muted">
        {props.widget.type} · <code>{props.widget.id}</code>
      </p>
      <TextProp
        f={f}
        name="name"
        label="Name (shown in the rules and the widget list)"
        value={props.widget.name}
        set={(v) => withField(props.widget, 'name', v === '' ? undefined : v)}
      />
      <KindFields f={f} media={props.media} />
      <BoxFields f={f} />
    </div>
  );
}
