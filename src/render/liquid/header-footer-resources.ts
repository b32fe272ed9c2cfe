// Publish-time half of the header/footer rule (the render-time half, which also sees URLs that
// come from variables, is src/render/chromium/header-footer-check.ts): Chromium prints headers
// and footers in frames that cannot load anything, and a stylesheet or font they try to load
// crashes the page's renderer. So a header or footer may use inline <style> and data: URLs
// (and Liquid output, which the render-time check sees resolved), but no external stylesheet,
// @import, font or <base href>.

const LIQUID_OR_DATA = /^\s*(?:["']\s*)?(?:data:|\{\{)/i;

function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}\\s*=\\s*("([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  return m ? (m[2] ?? m[3] ?? m[4] ?? '') : undefined;
}

/** What an author must change in a header or footer template, or undefined when it is fine. */
export function headerFooterResourceProblem(text: string): string | undefined {
  if (/<base[\s>]/i.test(text))
    return 'sets a base URL (<base href>): not allowed; headers and footers cannot load anything';
  for (const [tag] of text.matchAll(/<link\b[^>]*>/gi)) {
    const rel = (attr(tag, 'rel') ?? '').toLowerCase();
    const as = (attr(tag, 'as') ?? '').toLowerCase();
    const href = attr(tag, 'href') ?? '';
    if (LIQUID_OR_DATA.test(href)) continue;
    if (/\bstylesheet\b/.test(rel) || (/\bpreload\b/.test(rel) && as === 'style')) {
      return 'loads an external stylesheet: not allowed; put the CSS in a <style> element (or a data: URL)';
    }
    if (/\bpreload\b/.test(rel) && as === 'font')
      return 'loads an external font: not allowed; embed the font as a data: URL in @font-face';
  }
  for (const m of text.matchAll(/@import\s+(?:url\(\s*)?(["']?)([^"')\s;]*)/gi)) {
    if (!LIQUID_OR_DATA.test(m[2] ?? ''))
      return 'loads an external stylesheet (@import): not allowed; put the CSS in the <style> element itself';
  }
  for (const [block] of text.matchAll(/@font-face\s*\{[^}]*\}/gi)) {
    for (const m of block.matchAll(/url\(\s*(["']?)([^"')]*)/gi)) {
      if (!LIQUID_OR_DATA.test(m[2] ?? ''))
        return 'loads an external font (@font-face src): not allowed; embed the font as a data: URL';
    }
  }
  return undefined;
}
