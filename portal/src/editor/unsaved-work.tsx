// No lost work in the template editor: the draft is kept in this browser per template until it
// is saved (a reload or a Back brings it back), and leaving with unsaved changes asks first, in
// a dialog named "Unsaved changes" for the portal's own links and with the browser's own prompt
// when the page unloads.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { Draft } from './template-draft.ts';

interface Kept {
  /** The version the draft was based on (0: a new template). */
  base: number;
  draft: Draft;
  name: string;
  savedAt: number;
}

const PREFIX = 'docgen.draft:';

export function keptDraft(key: string, base: number): Kept | undefined {
  try {
    const raw = localStorage.getItem(PREFIX + key);
    if (!raw) return undefined;
    const kept = JSON.parse(raw) as Kept;
    return kept.base === base && kept.draft && typeof kept.draft.body === 'string' ? kept : undefined;
  } catch {
    return undefined;
  }
}

export function keepDraft(key: string, kept: Kept | undefined): void {
  try {
    if (kept) localStorage.setItem(PREFIX + key, JSON.stringify(kept));
    else localStorage.removeItem(PREFIX + key);
  } catch {
    // A full or disabled storage only loses the safety net, not the editing.
  }
}

/**
 * Asks before leaving while `dirty`: clicks on the portal's links open the "Unsaved changes"
 * dialog (captured before the router sees them), and unloading the page gets the browser's prompt.
 */
export function UnsavedChangesGuard({ dirty, onDiscard }: { dirty: boolean; onDiscard: () => void }) {
  const { route } = useLocation();
  const dirtyRef = useRef(dirty);
  const dialog = useRef<HTMLDialogElement>(null);
  const [leavingTo, setLeavingTo] = useState('');
  useEffect(() => {
    dirtyRef.current = dirty;
  }, [dirty]);
  useEffect(() => {
    const onClick = (e: MouseEvent) => {
      if (!dirtyRef.current || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
      const link = e.target instanceof Element ? e.target.closest<HTMLAnchorElement>('a[href]') : null;
      if (!link || link.origin !== location.origin || link.download || (link.target && link.target !== '_self')) return;
      const to = link.pathname + link.search + link.hash;
      if (link.hash && link.pathname === location.pathname) return;
      if (to === location.pathname + location.search) return;
      e.preventDefault();
      e.stopPropagation();
      setLeavingTo(to);
    };
    const onUnload = (e: BeforeUnloadEvent) => {
      if (!dirtyRef.current) return;
      e.preventDefault();
      e.returnValue = '';
    };
    document.addEventListener('click', onClick, true);
    window.addEventListener('beforeunload', onUnload);
    return () => {
      document.removeEventListener('click', onClick, true);
      window.removeEventListener('beforeunload', onUnload);
    };
  }, []);
  useEffect(() => {
    if (leavingTo && !dialog.current?.open) dialog.current?.showModal();
  }, [leavingTo]);
  const close = () => {
    dialog.current?.close();
    setLeavingTo('');
  };
  const leave = (discard: boolean) => {
    const to = leavingTo;
    dirtyRef.current = false;
    if (discard) onDiscard();
    close();
    route(to);
  };
  return (
    <dialog ref={dialog} aria-labelledby="unsaved-title" onClose={() => setLeavingTo('')}>
      <h2 id="unsaved-title">Unsaved changes</h2>
      <p>
        This template has changes that are not saved as a version. If you leave, they stay in this browser and come back
        when you open the template again, until you save or discard them.
      </p>
      <div class="row">
        <button type="button" onClick={close}>
          Keep editing
        </button>
        <button type="button" class="secondary" onClick={() => leave(false)}>
          Leave without saving
        </button>
        <button type="button" class="danger" onClick={() => leave(true)}>
          Discard changes and leave
        </button>
      </div>
    </dialog>
  );
}
