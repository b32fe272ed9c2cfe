// Wraps a rendered body into the full document Chromium prints.

/** Keeps CSS inside its <style> element: "</style" would end it early. */
function safeCss(css: string): string {
  return css.replace(/<\/(style)/gi, '<\\/$1');
}

const TEXT_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

function escapeText(text: string): string {
  return text.replace(/[&<>"]/g, (c) => TEXT_ESCAPES[c]!);
}

/** The version's CSS as a <style> element ('' for none); header/footer templates get it too. */
export function styleElement(css: string): string {
  return css.trim() === '' ? '' : `<style>\n${safeCss(css)}\n</style>`;
}

export interface DocumentHead {
  /** Plain text: the PDF's Title. '' leaves it out. */
  title?: string;
  /** BCP 47 tag for <html lang> (fonts for CJK, the PDF's /Lang). */
  language?: string;
}

export function buildHtmlDocument(body: string, css: string, head: DocumentHead = {}): string {
  const lang = head.language ? ` lang="${escapeText(head.language)}"` : '';
  const title = head.title ? `<title>${escapeText(head.title)}</title>` : '';
  return (
    `<!DOCTYPE html>\n<html${lang}><head><meta charset="utf-8">${title}` +
    (css.trim() === '' ? '' : `<style>\n${safeCss(css)}\n</style>`) +
    `</head><body>\n${body}\n</body></html>\n`
  );
}
