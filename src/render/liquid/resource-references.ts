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

// Every scan below is linear in the text: a version is up to 1 MiB of author input, checked in
// the process that serves every workspace. Regular expressions with an open end (`<!--[\s\S]*?-->`,
// `url\([^)]*\)`) retry from every start when the end never comes: quadratic on `<a "<a "<a "…`.

/** Finds the next occurrence of `needle` from a position, remembering it for later starts. */
class NextIndex {
  private at = -1;
  private found = -1;
  private readonly text: string;
  private readonly needle: string;
  constructor(text: string, needle: string) {
    this.text = text;
    this.needle = needle;
  }
  from(position: number): number {
    // The next occurrence from an earlier start is also the next from any start up to it.
    if (this.at >= 0 && position >= this.at && (this.found === -1 || position <= this.found)) return this.found;
    this.at = position;
    this.found = this.text.indexOf(this.needle, position);
    return this.found;
  }
}

/** Comments cannot load anything: blanked, keeping line breaks so positions stay right. */
function withoutComments(text: string): string {
  const lower = text.toLowerCase();
  const spans: Array<[number, number]> = [];
  const kinds: Array<{ open: RegExp; close: string }> = [
    { open: /<!--/g, close: '-->' },
    { open: /\{%-?\s*comment\s*-?%\}/g, close: 'endcomment' },
    { open: /\{%-?\s*#/g, close: '%}' },
    { open: /\/\*/g, close: '*/' },
  ];
  for (const { open, close } of kinds) {
    const next = new NextIndex(lower, close);
    for (let m = open.exec(lower); m; m = open.exec(lower)) {
      let end = next.from(m.index + m[0].length);
      if (end < 0) end = text.length;
      else if (close === 'endcomment') {
        const tagEnd = lower.indexOf('%}', end);
        end = tagEnd < 0 ? text.length : tagEnd + 2;
      } else end += close.length;
      spans.push([m.index, end]);
      open.lastIndex = end;
    }
  }
  if (spans.length === 0) return text;
  const chars = text.split('');
  for (const [from, to] of spans) for (let i = from; i < to; i++) if (chars[i] !== '\n') chars[i] = ' ';
  return chars.join('');
}

/** 1-based line and column of every index asked for, from one pass over the line breaks. */
function positions(text: string): (index: number) => { line: number; column: number } {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (index) => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (starts[mid]! <= index) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: index - starts[low]! + 1 };
  };
}

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

interface Attribute {
  name: string;
  value: string;
  /** Index of the attribute's name in the text. */
  at: number;
}

const SPACE = /\s/;

/**
 * Reads the attributes of the tag whose name ends at `from`; returns them and the index just
 * past the tag (or the end of the text when it never closes). Quotes are honoured; a quote that
 * never closes ends the tag at the end of the text.
 */
function readAttributes(text: string, from: number): { attributes: Attribute[]; end: number } {
  const attributes: Attribute[] = [];
  let i = from;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === '>') return { attributes, end: i + 1 };
    if (SPACE.test(c) || c === '/') {
      i += 1;
      continue;
    }
    const at = i;
    while (i < n && !SPACE.test(text[i]!) && text[i] !== '=' && text[i] !== '>' && text[i] !== '/') i += 1;
    const name = text.slice(at, i).toLowerCase();
    while (i < n && SPACE.test(text[i]!)) i += 1;
    if (text[i] !== '=') {
      if (name === '') i += 1;
      continue;
    }
    i += 1;
    while (i < n && SPACE.test(text[i]!)) i += 1;
    const quote = text[i];
    let value: string;
    if (quote === '"' || quote === "'") {
      const close = text.indexOf(quote, i + 1);
      if (close < 0) return { attributes, end: n };
      value = text.slice(i + 1, close);
      i = close + 1;
    } else {
      const start = i;
      while (i < n && !SPACE.test(text[i]!) && text[i] !== '>') i += 1;
      value = text.slice(start, i);
    }
    attributes.push({ name, value, at });
  }
  return { attributes, end: n };
}

/** Every reference in `text` that would not load, in order. */
export function unloadableReferences(source: string): ResourceReference[] {
  const text = withoutComments(source);
  const place = positions(text);
  const found: Array<{ index: number; where: string; url: string }> = [];
  const add = (index: number, where: string, url: string) => found.push({ index, where, url: url.trim() });

  // Tags: `<name attributes>`, each character read once.
  const tagStart = /<([a-zA-Z][\w:-]*)/g;
  for (let m = tagStart.exec(text); m; m = tagStart.exec(text)) {
    const element = m[1]!.toLowerCase();
    const { attributes, end } = readAttributes(text, m.index + m[0].length);
    tagStart.lastIndex = Math.max(end, m.index + m[0].length);
    for (const { name, value, at } of attributes) {
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

  // CSS url(…) and @import "…", in <style>, style attributes and the CSS alike.
  const lower = text.toLowerCase();
  const closeParen = new NextIndex(text, ')');
  const quotes = { '"': new NextIndex(text, '"'), "'": new NextIndex(text, "'") };
  for (let i = lower.indexOf('url(', 0); i >= 0; i = lower.indexOf('url(', i + 4)) {
    let j = i + 4;
    while (j < text.length && SPACE.test(text[j]!)) j += 1;
    const q = text[j];
    let url: string;
    if (q === '"' || q === "'") {
      const close = quotes[q].from(j + 1);
      if (close < 0) continue;
      url = text.slice(j + 1, close);
    } else {
      const close = closeParen.from(j);
      if (close < 0) continue;
      url = text.slice(j, close);
      if (/["']/.test(url)) continue; // not a url() after all
    }
    if (!isLoadable(url, true)) add(i, 'url()', url);
  }
  for (let i = lower.indexOf('@import', 0); i >= 0; i = lower.indexOf('@import', i + 7)) {
    let j = i + 7;
    while (j < text.length && SPACE.test(text[j]!)) j += 1;
    const q = text[j];
    if (q !== '"' && q !== "'") continue; // @import url(…) is a url() above
    const close = quotes[q].from(j + 1);
    if (close < 0) continue;
    const url = text.slice(j + 1, close);
    if (!isLoadable(url, false)) add(i, '@import', url);
  }
  return found.sort((a, b) => a.index - b.index).map(({ index, where, url }) => ({ ...place(index), where, url }));
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
