// The metadata and first-page stages: Author/Subject/Keywords from the version's metadata, and a
// first page with its own header/footer (its page drawing taken from a second print). The Title
// comes from the document's <title>, /Lang from <html lang>: Chromium writes both.
import { PDFDocument, PDFName } from 'pdf-lib';
import type { DocumentMetadata } from '../../domain/document-settings.ts';

export function setDocumentMetadata(doc: PDFDocument, m: DocumentMetadata): void {
  if (m.author !== '') doc.setAuthor(m.author);
  if (m.subject !== '') doc.setSubject(m.subject);
  if (m.keywords !== '')
    doc.setKeywords(
      m.keywords
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean),
    );
}

export async function copyFirstPage(doc: PDFDocument, firstPagePrint: Buffer): Promise<void> {
  if (doc.getPageCount() === 0) return;
  // The page object stays (the structure tree points at it, and its marked content is the
  // same in both prints of the same HTML); it takes the other print's drawing.
  const first = await PDFDocument.load(firstPagePrint, { updateMetadata: false });
  const [copied] = await doc.copyPages(first, [0]);
  const target = doc.getPage(0).node;
  for (const key of ['Contents', 'Resources']) {
    const value = copied!.node.get(PDFName.of(key));
    if (value !== undefined) target.set(PDFName.of(key), value);
  }
}
