// The overlay at scale: widgets as buttons, dragged with pointer events and resized by corner handles.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Overlay, Widget } from '../../../../shared/protocol/index.js';
import { widgetAccessibleName } from './widget-name.js';
import { WidgetPreview } from './widget-preview.js';

type Corner = 'nw' | 'ne' | 'sw' | 'se';
const CORNERS: readonly Corner[] = ['nw', 'ne', 'sw', 'se'];
const MIN_SIZE = 8;

interface Drag {
  id: string;
  mode: 'move' | Corner;
  startX: number;
  startY: number;
  orig: { x: number; y: number; width: number; height: number };
  /** One undo step per drag (see undo.ts). */
  key: string;
  moved: boolean;
}

/** The box a drag produces, in overlay pixels, rounded to whole pixels. */
export function dragged(
  drag: Drag,
  dx: number,
  dy: number,
): { x: number; y: number; width: number; height: number } {
  const o = drag.orig;
  if (drag.mode === 'move') return { ...o, x: Math.round(o.x + dx), y: Math.round(o.y + dy) };
  let { x, y, width, height } = o;
  if (drag.mode.includes('w')) {
    const w = Math.max(MIN_SIZE, o.width - dx);
    x = o.x + (o.width - w);
    width = w;
  }
  if (drag.mode.includes('e')) width = Math.max(MIN_SIZE, o.width + dx);
  if (drag.mode.includes('n')) {
    const h = Math.max(MIN_SIZE, o.height - dy);
    y = o.y + (o.height - h);
    height = h;
  }
  if (drag.mode.includes('s')) height = Math.max(MIN_SIZE, o.height + dy);
  return { x: Math.round(x), y: Math.round(y), width: Math.round(width), height: Math.round(height) };
}

export function Canvas(props: {
  overlay: Overlay;
  selected: string | undefined;
  onSelect: (id: string | undefined) => void;
  /** Moves or resizes a widget; `key` groups one drag into one undo step. */
  onBox: (id: string, box: Partial<Pick<Widget, 'x' | 'y' | 'width' | 'height'>>, key: string) => void;
}) {
  const { overlay } = props;
  const frame = useRef<HTMLDivElement>(null);
  const [available, setAvailable] = useState(960);
  const drag = useRef<Drag | undefined>();

  useEffect(() => {
    const el = frame.current;
    if (!el) return;
    const observer = new ResizeObserver(() => setAvailable(el.clientWidth));
    observer.observe(el);
    setAvailable(el.clientWidth);
    return () => observer.disconnect();
  }, []);

  // Fit the width, and keep a portrait canvas from running far below the fold.
  const scale = Math.min(available / overlay.width, (window.innerHeight * 0.7) / overlay.height, 1);

  const start = (e: PointerEvent, widget: Widget, mode: Drag['mode']) => {
    if (e.button !== 0) return;
    e.stopPropagation();
    props.onSelect(widget.id);
    const target = e.currentTarget;
    if (!(target instanceof HTMLElement)) return;
    const box = mode === 'move' ? target : target.parentElement;
    target.setPointerCapture(e.pointerId);
    drag.current = {
      id: widget.id,
      mode,
      startX: e.clientX,
      startY: e.clientY,
      // Unsized widgets take their rendered size (offsetWidth ignores the canvas transform).
      orig: {
        x: widget.x,
        y: widget.y,
        width: widget.width ?? box?.offsetWidth ?? 100,
        height: widget.height ?? box?.offsetHeight ?? 100,
      },
      key: `drag-${widget.id}-${e.timeStamp}`,
      moved: false,
    };
  };
  const move = (e: PointerEvent) => {
    const d = drag.current;
    if (!d) return;
    const dx = (e.clientX - d.startX) / scale;
    const dy = (e.clientY - d.startY) / scale;
    if (!d.moved && Math.abs(e.clientX - d.startX) < 2 && Math.abs(e.clientY - d.startY) < 2) return;
    d.moved = true;
    const box = dragged(d, dx, dy);
    props.onBox(d.id, d.mode === 'move' ? { x: box.x, y: box.y } : box, d.key);
  };
  const end = (e: PointerEvent) => {
    const target = e.currentTarget;
    if (target instanceof HTMLElement && target.hasPointerCapture(e.pointerId)) {
      target.releasePointerCapture(e.pointerId);
    }
    drag.current = undefined;
  };

  return (
    <div class="canvas-frame" ref={frame}>
      <div
        class="canvas-viewport"
        style={{ width: `${overlay.width * scale}px`, height: `${overlay.height * scale}px` }}
        onPointerDown={(e) => {
          if (e.target === e.currentTarget) props.onSelect(undefined);
        }}
      >
        <div
          class="canvas"
          data-scale={scale.toFixed(4)}
          style={{ width: `${overlay.width}px`, height: `${overlay.height}px`, transform: `scale(${scale})` }}
          onPointerDown={(e) => {
            if (e.target === e.currentTarget) props.onSelect(undefined);
          }}
        >
          {overlay.widgets.map((w) => {
            const isSelected = w.id === props.selected;
            return (
              <button
                type="button"
                key={w.id}
                class={`widget widget-${w.type}${isSelected ? ' selected' : ''}`}
                data-widget-id={w.id}
                aria-pressed={isSelected}
                aria-label={widgetAccessibleName(w)}
                style={{
                  left: `${w.x}px`,
                  top: `${w.y}px`,
                  width: w.width !== undefined ? `${w.width}px` : undefined,
                  height: w.height !== undefined ? `${w.height}px` : undefined,
                  // Handles and outline keep a constant on-screen size whatever the scale.
                  '--inv-scale': String(1 / scale),
                }}
                onFocus={() => props.onSelect(w.id)}
                onPointerDown={(e) => start(e, w, 'move')}
                onPointerMove={move}
                onPointerUp={end}
                onPointerCancel={end}
              >
                <WidgetPreview widget={w} />
                {isSelected &&
                  CORNERS.map((c) => (
                    <span
                      key={c}
                      class={`handle handle-${c}`}
                      data-handle={c}
                      aria-hidden="true"
                      onPointerDown={(e) => start(e, w, c)}
                      onPointerMove={move}
                      onPointerUp={end}
                      onPointerCancel={end}
                    />
                  ))}
              </button>
            );
          })}
        </div>
      </div>
    </div>
  );
}
