// Small shared controls: notices, field errors, copy and two-step confirm buttons.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

export function describeError(err: unknown): string {
  if (err instanceof ApiError) return err.status ? `${err.message} (${err.status} ${err.code})` : err.message;
  return err instanceof Error ? err.message : String(err);
}

export function Notice(props: { kind: 'error' | 'info' | 'ok'; children: ComponentChildren }) {
  return (
    <p class={`notice notice-${props.kind}`} role={props.kind === 'error' ? 'alert' : 'status'}>
      {props.children}
    </p>
  );
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
export function ConfirmButton(props: { label: string; question: string; onConfirm: () => void }) {
  const [asking, setAsking] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);
  // The button the user pressed is gone: keep keyboard focus in the question, on its safe answer.
  useEffect(() => {
    if (asking) cancel.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)}>
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
