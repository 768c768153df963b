// Small shared controls: notices, field errors, copy and two-step confirm buttons, platform marks.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { type PlatformId, platformFacts } from '../../../shared/platforms.js';
import { ApiError } from './api.js';

export function describeError(err: unknown): string {
  if (err instanceof ApiError) return err.status ? `${err.message} (${err.status} ${err.code})` : err.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * A message line. With `focus`, it takes keyboard focus (and scrolls into view) each time `focus`
 * changes: after an action whose button is gone or disabled, focus lands on what came of it, not on the
 * page's body.
 */
export function Notice(props: {
  kind: 'error' | 'info' | 'ok';
  children: ComponentChildren;
  focus?: unknown;
}) {
  const self = useRef<HTMLParagraphElement>(null);
  const { focus } = props;
  useEffect(() => {
    if (focus === undefined || !self.current) return;
    self.current.focus();
    self.current.scrollIntoView({ block: 'nearest' });
  }, [focus]);
  return (
    <p
      ref={self}
      class={`notice notice-${props.kind}`}
      role={props.kind === 'error' ? 'alert' : 'status'}
      tabIndex={focus === undefined ? undefined : -1}
    >
      {props.children}
    </p>
  );
}

/**
 * Focuses an element once it is on the page (after the render that adds it, or, for a view that loads
 * first, up to about two seconds later), and scrolls it into view.
 */
export function focusSoon(find: () => HTMLElement | null | undefined, frames = 120): void {
  requestAnimationFrame(() => {
    const element = find();
    if (!element) {
      if (frames > 0) focusSoon(find, frames - 1);
      return;
    }
    element.focus();
    element.scrollIntoView({ block: 'center' });
  });
}

/** The message shown beside an input; `id` is what the input's aria-describedby points at. */
export function FieldError(props: { id: string; message: string | undefined }) {
  if (!props.message) return null;
  return (
    <span class="field-error" id={props.id} role="alert">
      {props.message}
    </span>
  );
}

export function CopyButton(props: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setDone(true);
      setTimeout(() => setDone(false), 1500);
    } catch {
      // Clipboard refused (no user activation, policy): the URL stays visible to copy by hand.
      window.prompt('Copy this URL', props.text);
    }
  };
  return (
    <button type="button" onClick={copy}>
      {done ? 'Copied ✓' : props.label}
    </button>
  );
}

/** A destructive action that asks once more, inline, before it runs. */
export function ConfirmButton(props: {
  label: string;
  question: string;
  onConfirm: () => void;
  /** Told when the question opens (to look up something it should say). */
  onAsk?: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);
  // The button the user pressed is gone: keep keyboard focus in the question, on its safe answer.
  useEffect(() => {
    if (asking) cancel.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button
        type="button"
        class="danger"
        onClick={() => {
          setAsking(true);
          props.onAsk?.();
        }}
      >
        {props.label}
      </button>
    );
  }
  return (
    <fieldset class="confirm">
      <legend>{props.question}</legend>
      <button
        type="button"
        class="danger"
        onClick={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        Yes, {props.label.toLowerCase()}
      </button>
      <button type="button" ref={cancel} onClick={() => setAsking(false)}>
        Cancel
      </button>
    </fieldset>
  );
}

/** The upgrade link a tier-limit refusal ends with (daemon/src/licence/limits.ts), and the text before it. */
function splitUpgrade(message: string): { text: string; url: string | undefined } {
  const match = /\s(https?:\/\/\S+)\s*$/.exec(message);
  if (!match?.[1]) return { text: message, url: undefined };
  return { text: message.slice(0, match.index).replace(/:$/, '.'), url: match[1] };
}

/**
 * A refusal as the person should see it: a tier limit as a notice of its own with its upgrade link
 * (not "403 premium_required" and a bare URL), anything else as an error line.
 */
export function ErrorNotice(props: { error: unknown; prefix?: string }) {
  const { error } = props;
  if (error instanceof ApiError && error.code === 'premium_required') {
    const { text, url } = splitUpgrade(error.message);
    return (
      <div class="notice notice-limit" role="alert" data-limit>
        <strong>Free tier limit reached</strong>
        <p>{text}</p>
        {url && (
          <a class="button" href={url} target="_blank" rel="noreferrer noopener">
            See Premium
          </a>
        )}
      </div>
    );
  }
  return (
    <Notice kind="error">
      {props.prefix}
      {describeError(error)}
    </Notice>
  );
}

/**
 * The small mark of the platform an event or source belongs to, as the overlay page draws it (the glyph
 * comes from the page's platform-mark.css); none for `api`, as the platform table has it.
 */
export function PlatformMark(props: { platform: PlatformId }) {
  const facts = platformFacts(props.platform);
  if (!facts?.mark) return null;
  const { name } = facts;
  return (
    <span class="platform-mark" data-platform={props.platform} title={name} role="img" aria-label={name} />
  );
}
