// The "Preview" region: the rendered pages, what state the preview is in, page navigation and
// zoom, and a download of the previewed PDF. It says "Preview up to date" only while the pages
// on screen are the current draft's; otherwise "Preview out of date" with the reason, over
// dimmed pages. `data-preview-count` and `data-latency-ms` (pause → pages on screen) let tests
// and the latency benchmark follow updates.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { PdfView, type Zoom } from './pdf-view.tsx';
import type { PreviewState } from './use-live-preview.ts';
import type { TemplateDiagnostic } from '@gen/docgen/admin/v1/template_pb.js';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** What keeps the latest render from being the draft's pages, in words; '' when nothing does. */
function renderProblem(errors: TemplateDiagnostic[]): string {
  if (errors.length === 0) return '';
  const placed = errors.filter((d) => d.line > 0);
  const words = errors.filter((d) => d.line <= 0).map((d) => d.message);
  const parts = [...words];
  if (placed.length > 0)
    parts.push(
      `${plural(placed.length, 'error')} in the template, shown at ${placed.length === 1 ? 'its line' : 'their lines'}`,
    );
  return parts.join('; ');
}

export function PreviewPane({
  preview,
  label = 'Preview',
  blocked,
  currentKey,
}: {
  preview: PreviewState;
  label?: string;
  /** Why no preview of the current draft can be asked for (a viewer, a draft that cannot be sent). */
  blocked?: string | undefined;
  /** The content key of what the author sees now; absent: the latest request is current. */
  currentKey?: string;
}) {
  const [drawn, setDrawn] = useState<{
    count: number;
    latencyMs: number;
    drawMs: number;
    pdf: Uint8Array | undefined;
    pages: number;
  }>({ count: 0, latencyMs: 0, drawMs: 0, pdf: undefined, pages: 0 });
  const [viewError, setViewError] = useState('');
  const [zoom, setZoom] = useState<Zoom>('fit');
  const [page, setPage] = useState(1);
  const hostRef = useRef<HTMLElement>(null);
  const changedAtRef = useRef(preview.changedAt);
  // Read by onDrawn, which fires after the render that showed the new pages.
  useEffect(() => {
    changedAtRef.current = preview.changedAt;
  }, [preview.changedAt]);
  const downloadUrl = useMemo(
    () => (preview.pdf ? URL.createObjectURL(new Blob([preview.pdf.slice()], { type: 'application/pdf' })) : undefined),
    [preview.pdf],
  );
  useEffect(() => () => (downloadUrl ? URL.revokeObjectURL(downloadUrl) : undefined), [downloadUrl]);

  const current = currentKey ?? preview.resultKey;
  const shown = drawn.count > 0;
  const renderErrors = preview.renderDiagnostics.filter((d) => d.severity !== 'warning');
  const answered = preview.resultKey === current && !preview.pending;
  // Why the pages on screen are not (or not yet) the current draft's.
  let reason = '';
  if (blocked) reason = blocked;
  else if (preview.error && answered) reason = `the preview failed: ${preview.error}`;
  else if (!answered) reason = 'updating the preview…';
  else if (renderErrors.length > 0) reason = renderProblem(renderErrors);
  else if (preview.pdfKey !== current) reason = 'no pages came back for this draft';
  else if (drawn.pdf !== preview.pdf) reason = 'drawing the new pages…';
  const upToDate = shown && reason === '';
  // Problems the publish check finds that do not stop the render (e.g. an undeclared variable).
  const publishErrors = upToDate ? preview.diagnostics.filter((d) => d.severity !== 'warning') : [];
  // Errors without a line that the status does not already say (the publish check's).
  const unplaced = (blocked ? [] : preview.diagnostics).filter(
    (d) => d.line <= 0 && d.severity !== 'warning' && !renderErrors.some((r) => r.message === d.message),
  );

  let status: string;
  if (upToDate)
    status = `Preview up to date (rendered in ${preview.renderMs} ms, on screen ${drawn.latencyMs} ms after the last edit).`;
  else if (shown) status = `Preview out of date: ${reason}`;
  else if (!reason || reason === 'drawing the new pages…')
    status = preview.pdf ? 'Drawing preview…' : 'The preview appears here.';
  else if (reason === 'updating the preview…') status = 'Updating preview…';
  else status = `Not rendered: ${reason}`;
  const failed = !upToDate && (!!blocked || !!preview.error || renderErrors.length > 0);

  // The page in view: the last page whose top is above the middle of the pane.
  useEffect(() => {
    const host = hostRef.current;
    if (!host) return;
    const onScroll = () => {
      const frames = [...host.querySelectorAll<HTMLElement>('.pdf-page')];
      const middle = host.getBoundingClientRect().top + host.clientHeight / 3;
      let n = 1;
      frames.forEach((f, i) => {
        if (f.getBoundingClientRect().top <= middle) n = i + 1;
      });
      setPage(n);
    };
    host.addEventListener('scroll', onScroll, { passive: true });
    return () => host.removeEventListener('scroll', onScroll);
  }, []);
  const goTo = (n: number) => {
    const host = hostRef.current;
    const frame = host?.querySelectorAll<HTMLElement>('.pdf-page')[n - 1];
    if (!host || !frame) return;
    const bar = host.querySelector<HTMLElement>('.preview-bar')?.offsetHeight ?? 0;
    host.scrollTo({ top: frame.offsetTop - bar - 8 });
    setPage(n);
  };
  const pages = drawn.pages;
  const shownPage = Math.min(page, Math.max(pages, 1));

  return (
    <section
      class="preview"
      role="region"
      aria-label={label}
      ref={hostRef}
      data-preview-count={drawn.count}
      data-latency-ms={drawn.latencyMs}
      data-request-ms={preview.requestMs}
      data-render-ms={preview.renderMs}
      data-draw-ms={drawn.drawMs}
      data-up-to-date={upToDate ? 'true' : 'false'}
      aria-busy={preview.pending ? 'true' : 'false'}
    >
      <div class="preview-bar">
        <p class={`preview-status ${failed ? 'error' : ''}`} role="status">
          {status}
        </p>
        {shown && (
          <div class="preview-tools" role="group" aria-label="Pages">
            <button type="button" class="secondary small" disabled={shownPage <= 1} onClick={() => goTo(shownPage - 1)}>
              Previous page
            </button>
            <span class="page-count">
              Page {shownPage} of {pages}
            </span>
            <button
              type="button"
              class="secondary small"
              disabled={shownPage >= pages}
              onClick={() => goTo(shownPage + 1)}
            >
              Next page
            </button>
            <label class="inline">
              Zoom
              <select value={zoom} onChange={(e) => setZoom(e.currentTarget.value as Zoom)}>
                <option value="fit">Fit width</option>
                <option value="actual">100 %</option>
              </select>
            </label>
            {downloadUrl && (
              <a href={downloadUrl} download="preview.pdf">
                Download preview PDF
              </a>
            )}
          </div>
        )}
      </div>
      {unplaced.length > 0 && (
        <ul class="preview-problems" aria-label="Problems without a line">
          {unplaced.map((d, i) => (
            <li key={i}>{d.message}</li>
          ))}
        </ul>
      )}
      {publishErrors.length > 0 && (
        <p class="muted">
          The pages are up to date; {plural(publishErrors.length, 'problem')} would stop publishing (see Problems).
        </p>
      )}
      {viewError && (
        <p class="error" role="alert">
          {viewError}
        </p>
      )}
      {/* Focusable, so the pages scroll from the keyboard too. */}
      <div
        class={upToDate || !shown ? 'pdf-frame' : 'pdf-frame stale'}
        role="document"
        aria-label="Preview pages"
        tabIndex={0}
      >
        <PdfView
          pdf={preview.pdf}
          zoom={zoom}
          onDrawn={(drawMs, pageCount, pdf) => {
            setViewError('');
            setDrawn((d) => ({
              count: d.count + 1,
              latencyMs: Math.round(performance.now() - changedAtRef.current),
              drawMs,
              pdf,
              pages: pageCount,
            }));
          }}
          onError={setViewError}
        />
      </div>
    </section>
  );
}
