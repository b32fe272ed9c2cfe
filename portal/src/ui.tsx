// Small shared pieces: error and status lines, a load-on-mount hook, a one-time secret with a
// copy button, a confirmation dialog, and time formatting.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { errorText } from './api.ts';

export function ErrorMessage({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return (
    <p class="error" role="alert">
      {typeof error === 'string' ? error : errorText(error)}
    </p>
  );
}

/** Loads on mount and whenever deps change; `reload` fetches again. */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
): { data: T | undefined; error: unknown; loading: boolean; reload: () => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let current = true;
    setLoading(true);
    load().then(
      (value) => {
        if (!current) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (err: unknown) => {
        if (!current) return;
        setError(err);
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the caller's deps stand for what load reads
  }, [...deps, tick]);
  return { data, error, loading, reload: useCallback(() => setTick((t) => t + 1), []) };
}

/** Runs an action, keeping its error and a busy flag for the button that started it. */
export function useAction(): {
  busy: boolean;
  error: unknown;
  run: (action: () => Promise<void>) => Promise<void>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: useCallback(() => setError(undefined), []) };
}

export function formatTime(ts: Timestamp | undefined): string {
  if (!ts) return '—';
  const date = timestampDate(ts);
  if (date.getTime() === 0) return '—';
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function Time({ ts }: { ts: Timestamp | undefined }) {
  if (!ts) return <span>—</span>;
  return <time dateTime={timestampDate(ts).toISOString()}>{formatTime(ts)}</time>;
}

/** A secret the server returns once: shown with a copy button and a warning. */
export function SecretOnce({ label, secret, onDone }: { label: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState<string>('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('Copying failed: select the text and copy it yourself.');
    }
  };
  return (
    <div class="secret" role="group" aria-label={label}>
      <p>
        <strong>{label}</strong> — shown only now; store it somewhere safe.
      </p>
      <code class="secret-value" data-secret tabIndex={0}>
        {secret}
      </code>
      <div class="row">
        <button type="button" onClick={copy}>
          Copy
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
      <p role="status" class="muted">
        {copied}
      </p>
    </div>
  );
}

/** A button that asks before doing something that cannot be undone. */
export function ConfirmButton(props: {
  label: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  danger?: boolean;
  secondary?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const confirm = async () => {
    setBusy(true);
    try {
      await props.onConfirm();
    } finally {
      setBusy(false);
      dialog.current?.close();
    }
  };
  return (
    <>
      <button
        type="button"
        class={props.danger ? 'danger' : props.secondary ? 'secondary' : ''}
        onClick={() => dialog.current?.showModal()}
      >
        {props.label}
      </button>
      <dialog ref={dialog} aria-label={props.question}>
        <p>{props.question}</p>
        <div class="row">
          <button type="button" class="danger" disabled={busy} onClick={confirm}>
            {props.confirmLabel}
          </button>
          <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </dialog>
    </>
  );
}

export function Page({
  title,
  actions,
  children,
}: {
  title: string;
  actions?: ComponentChildren;
  children: ComponentChildren;
}) {
  useEffect(() => {
    document.title = `${title} · docgen`;
  }, [title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-header">
        <h1 id="page-title">{title}</h1>
        <div class="row">{actions}</div>
      </header>
      {children}
    </section>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/**
 * A table that never widens the page: wider than the window, it scrolls sideways inside this
 * box, which then is a region named after the table's caption (or `label`) that takes the
 * focus, so that the keyboard scrolls it too. While the table fits it is a plain box.
 */
export function TableScroll({ label, children }: { label?: string; children: ComponentChildren }) {
  const box = useRef<HTMLDivElement>(null);
  const [name, setName] = useState('');
  useEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const measure = () => {
      const overflowing = el.scrollWidth > el.clientWidth + 1;
      const caption = el.querySelector('caption')?.textContent?.trim() ?? '';
      setName(overflowing ? label || caption || 'Table' : '');
    };
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    const table = el.querySelector('table');
    if (table) observer.observe(table);
    measure();
    return () => observer.disconnect();
  }, [label]);
  return (
    <div
      ref={box}
      class="table-scroll"
      {...(name ? { role: 'region', 'aria-label': `${name} (scrolls sideways)`, tabIndex: 0 } : {})}
    >
      {children}
    </div>
  );
}
