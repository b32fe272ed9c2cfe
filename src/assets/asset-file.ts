// What an uploaded asset is, decided from its bytes: magic numbers (file-type) for images and
// fonts, an XML parse for SVG. The name's extension must agree with the bytes, so a file is
// never served under a type it is not. SVG is sanitised (DOMPurify: scripts, event handlers,
// foreignObject go) and refused when it still points outside itself (a URL in href/src or
// in CSS), because the renderer would have to load it.
import createDOMPurify from 'dompurify';
import { fileTypeFromBuffer } from 'file-type';
// @ts-expect-error jsdom ships no types; the few DOM shapes used here are declared below.
import { JSDOM } from 'jsdom';
import { ASSET_NAME } from '../render/liquid/asset-url.ts';

/** `document`: a PDF, for attaching to the PDF a template prints (TemplateVersionContent.attachments). */
export type AssetKind = 'image' | 'font' | 'document';

interface AssetType {
  contentType: string;
  kind: AssetKind;
  /** Shown in messages. */
  label: string;
  extensions: string[];
}

export const ASSET_TYPES: readonly AssetType[] = [
  { contentType: 'image/png', kind: 'image', label: 'PNG image', extensions: ['png'] },
  { contentType: 'image/jpeg', kind: 'image', label: 'JPEG image', extensions: ['jpg', 'jpeg'] },
  { contentType: 'image/webp', kind: 'image', label: 'WebP image', extensions: ['webp'] },
  { contentType: 'image/gif', kind: 'image', label: 'GIF image', extensions: ['gif'] },
  { contentType: 'image/svg+xml', kind: 'image', label: 'SVG image', extensions: ['svg'] },
  { contentType: 'font/woff2', kind: 'font', label: 'WOFF2 font', extensions: ['woff2'] },
  { contentType: 'font/woff', kind: 'font', label: 'WOFF font', extensions: ['woff'] },
  { contentType: 'font/ttf', kind: 'font', label: 'TrueType font', extensions: ['ttf'] },
  { contentType: 'font/otf', kind: 'font', label: 'OpenType font', extensions: ['otf'] },
  { contentType: 'application/pdf', kind: 'document', label: 'PDF document', extensions: ['pdf'] },
];

const SUPPORTED = 'PNG, JPEG, WebP, GIF, SVG, WOFF2, WOFF, TTF, OTF or PDF';

/** A refused upload; the message says why and what to do. */
export class AssetRejected extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

export interface CheckedAsset {
  contentType: string;
  kind: AssetKind;
  /** What is stored: the upload, or the sanitised SVG. */
  bytes: Buffer;
  /** What sanitising removed. */
  warnings: string[];
}

function typeForExtension(name: string): AssetType | undefined {
  const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  return ASSET_TYPES.find((t) => t.extensions.includes(ext));
}

/** Checks the name, detects the type from the bytes and sanitises SVG; throws AssetRejected. */
export async function checkAssetFile(name: string, bytes: Buffer, maxBytes: number): Promise<CheckedAsset> {
  if (!ASSET_NAME.test(name) || !name.includes('.')) {
    throw new AssetRejected(
      'name',
      `${JSON.stringify(name)} is not a valid asset name; use 1-100 characters of A-Z, a-z, 0-9, '_', '.', '-' with an extension (e.g. logo.png)`,
    );
  }
  const claimed = typeForExtension(name);
  if (!claimed) throw new AssetRejected('name', `${name}: the extension is not one of a supported type (${SUPPORTED})`);
  if (bytes.length === 0) throw new AssetRejected('content', `${name} is empty`);
  if (bytes.length > maxBytes) {
    throw new AssetRejected(
      'content',
      `${name} is ${bytes.length} bytes; assets may be at most ${maxBytes} bytes (DOCGEN_ASSET_MAX_BYTES)`,
    );
  }
  // file-type calls any XML "application/xml"; SVG is XML whose root is <svg>.
  const sniffed = await fileTypeFromBuffer(bytes);
  const svgType = ASSET_TYPES.find((t) => t.extensions.includes('svg'));
  const isSvg = (!sniffed || sniffed.mime === 'application/xml') && looksLikeSvg(bytes);
  const detected = isSvg ? svgType : sniffed ? ASSET_TYPES.find((t) => t.contentType === sniffed.mime) : undefined;
  if (!detected) {
    const what = sniffed ? `${sniffed.mime} data` : 'not a file type docgen recognises';
    throw new AssetRejected('content', `${name} is ${what}; assets must be ${SUPPORTED}`);
  }
  if (detected !== claimed) {
    const ext = detected.extensions[0]!;
    throw new AssetRejected(
      'content',
      `${name} is named as a ${claimed.label} but its content is: ${detected.label} (${detected.contentType}); rename it to .${ext}`,
    );
  }
  if (detected.contentType !== 'image/svg+xml')
    return { contentType: detected.contentType, kind: detected.kind, bytes, warnings: [] };
  const svg = sanitizeSvg(name, bytes.toString('utf8'));
  return {
    contentType: detected.contentType,
    kind: 'image',
    bytes: Buffer.from(svg.svg, 'utf8'),
    warnings: svg.warnings,
  };
}

function looksLikeSvg(bytes: Buffer): boolean {
  const head = bytes
    .subarray(0, 4096)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  // An XML declaration, comments and a doctype may come first.
  const rest = head.replace(/^\s*(<\?xml[^>]*\?>\s*)?((<!--[\s\S]*?-->|<!DOCTYPE[^>]*>)\s*)*/i, '');
  return /^<svg[\s>]/i.test(rest);
}

// References that stay inside the SVG (#id) or carry their data (data:image/...).
const LOCAL_REFERENCE = /^\s*(#|data:image\/(png|jpeg|gif|webp);)/i;
const CSS_REFERENCE = /url\(\s*['"]?|(-webkit-)?image-set\(|@import/gi;

// The DOM shapes this file touches (the project compiles without the DOM library).
interface DomAttr {
  name: string;
  localName: string;
  value: string;
}
interface DomElement {
  localName: string;
  attributes: Iterable<DomAttr>;
  textContent: string | null;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): Iterable<DomElement>;
}
interface DomWindow {
  XMLSerializer: new () => { serializeToString(node: DomElement): string };
  close(): void;
}
interface RemovedNode {
  element?: DomElement;
  attribute?: DomAttr;
  from?: DomElement;
}

interface SanitizedSvg {
  svg: string;
  warnings: string[];
}

/** CSS escapes resolved (`\\75 rl(` is `url(`), so an escaped reference is seen for what it is. */
function unescapeCss(text: string): string {
  return text
    .replace(/\\([0-9a-fA-F]{1,6})\s?/g, (_, hex: string) => {
      const code = Number.parseInt(hex, 16);
      return String.fromCodePoint(code > 0 && code <= 0x10ffff ? code : 0xfffd);
    })
    .replace(/\\(.)/g, '$1');
}

/**
 * url(…), image-set(…) and @import in CSS text that point outside the SVG. Each url( is judged
 * by what follows it (after an optional quote), so no quoting trick hides a URL from the check.
 */
function externalUrlsInCss(css: string): string[] {
  const text = unescapeCss(css);
  const found: string[] = [];
  for (const m of text.matchAll(CSS_REFERENCE)) {
    const after = text.slice((m.index ?? 0) + m[0].length);
    if (m[0].toLowerCase().startsWith('url') && LOCAL_REFERENCE.test(after)) continue;
    found.push(text.slice(m.index, (m.index ?? 0) + 100));
  }
  return found;
}

/**
 * Every reference out of the SVG: href/src, and url(…) in any attribute (presentation
 * attributes such as fill, stroke, filter, mask, clip-path and marker-* take url() too), in
 * style attributes and <style> elements. Only #fragment references (and data:image URLs in
 * CSS) stay inside. Chromium prints without network access anyway; this does not rely on it.
 */
function externalReferences(root: DomElement): string[] {
  const found: string[] = [];
  for (const el of [root, ...root.querySelectorAll('*')]) {
    for (const attr of el.attributes) {
      const local = attr.localName.toLowerCase();
      if ((local === 'href' || local === 'src') && !LOCAL_REFERENCE.test(attr.value))
        found.push(`${el.localName} ${attr.name}="${attr.value.slice(0, 100)}"`);
      for (const url of externalUrlsInCss(attr.value)) found.push(`${el.localName} ${attr.name} ${url}`);
    }
    if (el.localName === 'style') {
      for (const url of externalUrlsInCss(el.textContent ?? '')) found.push(`<style> ${url}`);
    }
  }
  return found;
}

export function sanitizeSvg(name: string, text: string): SanitizedSvg {
  const { window } = new JSDOM('') as { window: DomWindow };
  const purify = createDOMPurify(window as unknown as Parameters<typeof createDOMPurify>[0]);
  try {
    const body = purify.sanitize(text, {
      USE_PROFILES: { svg: true, svgFilters: true },
      RETURN_DOM: true,
      // DOMPurify drops <use> by default; local ones (#id) are common in exported icons, and
      // ones pointing at other files are refused below.
      ADD_TAGS: ['use'],
    }) as unknown as DomElement;
    const root = body.querySelector('svg');
    if (!root)
      throw new AssetRejected('content', `${name} is not an SVG image (no <svg> element left after sanitising)`);
    const removed = purify.removed as unknown as RemovedNode[];
    const warnings = [
      ...new Set(
        removed.map((r) =>
          r.element
            ? `removed <${r.element.localName ?? 'node'}>`
            : `removed attribute ${r.attribute?.name ?? ''} from <${r.from?.localName ?? ''}>`,
        ),
      ),
    ].filter((w) => !/removed <(undefined|node|body|html|head)>/.test(w));
    const external = externalReferences(root);
    if (external.length > 0) {
      throw new AssetRejected(
        'content',
        `${name} references content outside itself (${external.slice(0, 3).join('; ')}); docgen renders without network access, so embed it (data: URL) or remove it`,
      );
    }
    const svg = new window.XMLSerializer().serializeToString(root);
    return { svg, warnings };
  } finally {
    window.close();
  }
}
