// How templates point at workspace assets: `{{ 'logo.png' | asset_url }}` gives a URL on a
// reserved origin that never resolves (.invalid, RFC 6761). The renderer answers requests
// for it from the render's own assets (page-guard.ts) and inlines them as data: URLs where
// Chromium cannot load anything (header/footer templates), so no asset ever needs a network.

/** Origin of asset URLs; nothing outside the renderer ever answers it. */
export const ASSET_URL_PREFIX = 'https://assets.docgen.invalid/';

/** Asset names: a file name with an extension, no paths. */
export const ASSET_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;

export function assetUrl(name: string): string {
  return ASSET_URL_PREFIX + encodeURIComponent(name);
}

/** The asset name a URL of ASSET_URL_PREFIX names; undefined for any other URL. */
export function assetNameFromUrl(url: string): string | undefined {
  if (!url.startsWith(ASSET_URL_PREFIX)) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(url.slice(ASSET_URL_PREFIX.length).split(/[?#]/)[0]!);
  } catch {
    return undefined;
  }
  return ASSET_NAME.test(name) ? name : undefined;
}

const LITERAL_USE = /(['"])([^'"\n]{1,200})\1\s*\|\s*asset_url\b/g;

/** Asset names used with a literal name (`'logo.png' | asset_url`) in a Liquid source. */
export function literalAssetNames(source: string): string[] {
  const names = new Set<string>();
  for (const match of source.matchAll(LITERAL_USE)) names.add(match[2]!);
  return [...names];
}

/** Every literal asset name a version's sources use (publishing checks they exist). */
export function literalAssetNamesOf(content: {
  body: string;
  css: string;
  partials: Record<string, string>;
  title?: string | undefined;
  pdfOptions: {
    headerTemplate: string;
    footerTemplate: string;
    firstPageHeaderTemplate?: string | undefined;
    firstPageFooterTemplate?: string | undefined;
  };
}): string[] {
  const o = content.pdfOptions;
  const sources = [
    content.body,
    content.css,
    ...Object.values(content.partials),
    o.headerTemplate,
    o.footerTemplate,
    o.firstPageHeaderTemplate ?? '',
    o.firstPageFooterTemplate ?? '',
  ];
  return [...new Set(sources.flatMap((s) => (typeof s === 'string' ? literalAssetNames(s) : [])))];
}
