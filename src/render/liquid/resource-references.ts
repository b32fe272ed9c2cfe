// References to resources a document would have to load: `src`, `srcset`, `poster`, `data`, a
// `<link>`/`<base>` href, an SVG `href`/`xlink:href` (<use>, <image>, …), CSS `url()` and
// `@import`. docgen prints without a network: only data: URLs and workspace assets (Liquid
// `asset_url`) load. Anything else is refused when publishing, at its line (an SVG <use> of an
// external file would otherwise hold up every render until the load time-out), and a render
// that times out names the reference that held it up.
//
// Works on Liquid sources and on rendered HTML alike: a value with Liquid in it (`{{ … }}`) is
// left to render time, where request interception refuses what it resolves to.

export interface ResourceReference {
  /** 1-based position of the reference in the text. */
  line: number;
  column: number;
  /** Where it is, as an author reads it: `<use href>`, `<img src>`, `url()`, `@import`. */
  where: string;
  url: string;
}

/** Attributes that load what they name, on any element. */
const LOADING_ATTRIBUTES = new Set(['src', 'srcset', 'poster', 'data', 'background', 'xlink:href']);
/** Elements whose plain `href` loads (SVG 2 drops the xlink: prefix). <a href> is a link, not a load. */
const HREF_LOADS = new Set([
  'link',
  'base',
  'use',
  'image',
  'feimage',
  'script',
  'pattern',
  'filter',
  'lineargradient',
  'radialgradient',
  'textpath',
  'mpath',
  'tref',
]);

function isLoadable(url: string, fragmentAllowed: boolean): boolean {
  const u = url.trim();
  if (u === '' || /\{[{%]/.test(u)) return true; // Liquid: decided at render time
  if (/^data:/i.test(u)) return true;
  // A fragment names an element of the document itself (<use href="#icon">, fill: url(#grad)).
  if (fragmentAllowed && u.startsWith('#')) return true;
  return false;
}

/** Comments cannot load anything: blanked, keeping line breaks so positions stay right. */
function withoutComments(text: string): string {
  const blank = (m: string) => m.replace(/[^\n]/g, ' ');
  return text
    .replace(/<!--[\s\S]*?-->/g, blank)
    .replace(/\{%-?\s*comment\s*-?%\}[\s\S]*?\{%-?\s*endcomment\s*-?%\}/g, blank)
    .replace(/\{%-?\s*#[\s\S]*?%\}/g, blank)
    .replace(/\/\*[\s\S]*?\*\//g, blank);
}

function position(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let last = -1;
  for (let i = text.indexOf('\n'); i >= 0 && i < index; i = text.indexOf('\n', i + 1)) {
    line += 1;
    last = i;
  }
  return { line, column: index - last };
}

const TAG = /<([a-zA-Z][\w:-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/g;
const ATTRIBUTE = /([^\s=/>]+)(?:\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
const CSS_URL = /url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"]*?))\s*\)/gi;
const CSS_IMPORT = /@import\s+(?:"([^"]*)"|'([^']*)')/gi;

/**
 * The URLs of a srcset: each candidate is a URL (no spaces; a data: URL may hold commas), then
 * descriptors up to a comma.
 */
function srcsetUrls(srcset: string): string[] {
  const urls: string[] = [];
  let rest = srcset;
  for (;;) {
    rest = rest.replace(/^[\s,]+/, '');
    if (rest === '') return urls;
    const url = /^\S+/.exec(rest)![0];
    rest = rest.slice(url.length);
    if (url.endsWith(',')) urls.push(url.replace(/,+$/, ''));
    else {
      urls.push(url);
      const comma = rest.indexOf(',');
      rest = comma < 0 ? '' : rest.slice(comma + 1);
    }
  }
}

/** Every reference in `text` that would not load, in order. */
export function unloadableReferences(source: string): ResourceReference[] {
  const text = withoutComments(source);
  const found: ResourceReference[] = [];
  const add = (index: number, where: string, url: string) =>
    found.push({ ...position(text, index), where, url: url.trim() });

  for (const tag of text.matchAll(TAG)) {
    const element = tag[1]!.toLowerCase();
    const attributes = tag[2]!;
    const attributesAt = tag.index + 1 + tag[1]!.length;
    for (const a of attributes.matchAll(ATTRIBUTE)) {
      const name = a[1]!.toLowerCase();
      const value = a[3] ?? a[4] ?? a[5];
      if (value === undefined) continue;
      const at = attributesAt + a.index;
      if (name === 'srcset') {
        for (const url of srcsetUrls(value)) if (!isLoadable(url, false)) add(at, `<${element} srcset>`, url);
      } else if (LOADING_ATTRIBUTES.has(name) && !(element === 'a' && name === 'xlink:href')) {
        if (!isLoadable(value, name === 'xlink:href')) add(at, `<${element} ${name}>`, value);
      } else if (name === 'href' && HREF_LOADS.has(element)) {
        if (!isLoadable(value, element !== 'link' && element !== 'base' && element !== 'script'))
          add(at, `<${element} href>`, value);
      }
    }
  }
  for (const m of text.matchAll(CSS_URL)) {
    const url = m[1] ?? m[2] ?? m[3] ?? '';
    if (!isLoadable(url, true)) add(m.index, 'url()', url);
  }
  for (const m of text.matchAll(CSS_IMPORT)) {
    const url = m[1] ?? m[2] ?? '';
    if (!isLoadable(url, false)) add(m.index, '@import', url);
  }
  return found.sort((a, b) => a.line - b.line || a.column - b.column);
}

/** One reference in words: what to do instead. */
export function describeReference(ref: ResourceReference): string {
  const shown = ref.url.length > 80 ? `${ref.url.slice(0, 77)}…` : ref.url;
  const name = /([A-Za-z0-9_.-]+\.[A-Za-z0-9]{2,5})(?:[?#].*)?$/.exec(ref.url)?.[1];
  const asset = name ? `{{ '${name}' | asset_url }}` : `{{ 'name.png' | asset_url }}`;
  const use =
    ref.where.endsWith(' href>') && ref.where.startsWith('<use')
      ? '; or point <use> at an element of the document (href="#id")'
      : '';
  return `${ref.where} refers to "${shown}", which cannot load: docgen renders without a network, so only data: URLs and workspace assets load (upload the file as an asset and use ${asset}, or embed it as a data: URL${use})`;
}

/**
 * Why `what` ("The document", "The footer template") did not finish loading: the first
 * reference that cannot load, at its line in the rendered HTML, when there is one.
 */
export function loadTimeoutMessage(what: string, timeoutMs: number, html: string): string {
  const ref = unloadableReferences(html)[0];
  const head = `${what} did not finish loading within ${timeoutMs} ms`;
  if (!ref) {
    return `${head}: something in it waits for a resource that never arrives (only data: URLs and workspace assets load; an SVG <use> of an external file never finishes)`;
  }
  return `${head} because ${describeReference(ref).replace(/^(\S+ \S+) refers/, `$1 at line ${ref.line} of the rendered HTML refers`)}`;
}
