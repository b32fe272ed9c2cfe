// Wraps a rendered body into the full document Chromium prints.

/** Keeps CSS inside its <style> element: "</style" would end it early. */
function safeCss(css: string): string {
  return css.replace(/<\/(style)/gi, '<\\/$1');
}

export function buildHtmlDocument(body: string, css: string): string {
  return (
    '<!DOCTYPE html>\n<html><head><meta charset="utf-8">' +
    (css.trim() === '' ? '' : `<style>\n${safeCss(css)}\n</style>`) +
    `</head><body>\n${body}\n</body></html>\n`
  );
}
