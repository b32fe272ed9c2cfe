// Draws PDF bytes with pdf.js (served from our own origin, its worker too): each page as a
// canvas with a text layer over it, so the text can be selected, read by screen readers and
// asserted on by tests. Chromium's built-in PDF viewer is not used: it does not run headless
// and would need a blob: frame. A new document is drawn off-screen and swapped in whole, so
// the preview never flickers while the author types.
import { useEffect, useRef, useState } from 'preact/hooks';
import * as pdfjs from 'pdfjs-dist';
import workerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';

pdfjs.GlobalWorkerOptions.workerSrc = workerUrl;
// One parsing worker for every preview: starting one per document would cost each keystroke.
let sharedWorker: pdfjs.PDFWorker | undefined;

const MAX_PAGES = 20;
/** CSS pixels per PDF point: 100 % shows the page at its printed size. */
const ACTUAL_SIZE = 96 / 72;

/** Fit the pane's width, or the printed size. */
export type Zoom = 'fit' | 'actual';

async function drawDocument(
  pdf: Uint8Array,
  width: number,
  zoom: Zoom,
): Promise<{ pages: HTMLElement; count: number }> {
  // pdf.js takes ownership of the buffer it is given; keep the caller's copy intact.
  sharedWorker ??= new pdfjs.PDFWorker();
  // Drawing happens here, on the page's thread: previews are small and this keeps one worker.
  // Glyphs are drawn as paths (disableFontFace): loading each embedded font as a FontFace for
  // every new preview tripled the drawing time of the sample invoice (≈450 → ≈150 ms).
  const task = pdfjs.getDocument({
    data: pdf.slice(),
    worker: sharedWorker,
    enableXfa: false,
    disableWorkerRendering: true,
    disableFontFace: true,
  });
  const doc = await task.promise;
  const pages = document.createElement('div');
  pages.className = 'pdf-pages';
  try {
    for (let n = 1; n <= Math.min(doc.numPages, MAX_PAGES); n++) {
      const page = await doc.getPage(n);
      const base = page.getViewport({ scale: 1 });
      const scale = zoom === 'actual' ? ACTUAL_SIZE : Math.max(0.3, (width - 16) / base.width);
      const viewport = page.getViewport({ scale });
      const ratio = window.devicePixelRatio || 1;
      const frame = document.createElement('div');
      frame.className = 'pdf-page';
      frame.setAttribute('role', 'group');
      frame.setAttribute('aria-label', `Page ${n} of ${doc.numPages}`);
      frame.style.width = `${Math.floor(viewport.width)}px`;
      frame.style.height = `${Math.floor(viewport.height)}px`;
      frame.style.setProperty('--scale-factor', String(scale));
      frame.style.setProperty('--total-scale-factor', String(scale));
      frame.style.setProperty('--scale-round-x', '1px');
      frame.style.setProperty('--scale-round-y', '1px');
      const canvas = document.createElement('canvas');
      canvas.width = Math.floor(viewport.width * ratio);
      canvas.height = Math.floor(viewport.height * ratio);
      canvas.setAttribute('aria-hidden', 'true');
      const text = document.createElement('div');
      text.className = 'textLayer';
      frame.append(canvas, text);
      pages.append(frame);
      await page.render({ canvas, viewport, transform: ratio === 1 ? undefined : [ratio, 0, 0, ratio, 0, 0] }).promise;
      await new pdfjs.TextLayer({ textContentSource: page.streamTextContent(), container: text, viewport }).render();
      page.cleanup();
    }
    if (doc.numPages > MAX_PAGES) {
      const more = document.createElement('p');
      more.className = 'muted';
      more.textContent = `${doc.numPages - MAX_PAGES} more pages not shown; download the PDF to see them.`;
      pages.append(more);
    }
    return { pages, count: doc.numPages };
  } finally {
    await task.destroy();
  }
}

/** Renders `pdf`; calls onDrawn once the pages are on screen (for the latency figure). */
export function PdfView({
  pdf,
  zoom = 'fit',
  onDrawn,
  onError,
}: {
  pdf: Uint8Array | undefined;
  zoom?: Zoom;
  /** The drawing took `drawMs`; `pdf` is the document now on screen. */
  onDrawn?: (drawMs: number, pages: number, pdf: Uint8Array) => void;
  onError?: (message: string) => void;
}) {
  const hostRef = useRef<HTMLDivElement>(null);
  const generationRef = useRef(0);
  // Fit width follows the pane: a narrower window (or a wider one) redraws the pages to fit.
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const host = hostRef.current;
    if (!host || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => {
      const now = host.clientWidth;
      setWidth((was) => (Math.abs(now - was) > 24 ? now : was));
    });
    observer.observe(host);
    return () => observer.disconnect();
  }, []);
  const fitWidth = zoom === 'fit' ? width : 0;
  useEffect(() => {
    const target = hostRef.current;
    if (!target || !pdf) return;
    const mine = ++generationRef.current;
    const started = performance.now();
    drawDocument(pdf, target.clientWidth || 600, zoom).then(
      ({ pages, count }) => {
        if (mine !== generationRef.current) return;
        target.replaceChildren(pages);
        onDrawn?.(Math.round(performance.now() - started), count, pdf);
      },
      (err: unknown) => {
        if (mine === generationRef.current)
          onError?.(`The PDF could not be displayed: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
    /* eslint-disable-next-line react-hooks/exhaustive-deps -- a new PDF, zoom or fitted width redraws; the
       callbacks (new closures on every render of the parent) are read when the drawing finishes */
  }, [pdf, zoom, fitWidth]);
  return <div class={`pdf-view zoom-${zoom}`} ref={hostRef} />;
}
