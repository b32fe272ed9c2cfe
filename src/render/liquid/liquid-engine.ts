// The one liquidjs configuration used for publish-time checks and for rendering, so that what
// publishing accepts is exactly what rendering runs.
//
// - Templates reach only the version's own partials: an in-memory FS with exact-name lookup
//   (no path resolution, no relative references, no file system, no prototype keys).
// - Output is HTML-escaped by default; `raw` opts out. `escape`/`escape_once`/`newline_to_br`
//   return already-safe HTML, so the usual `{{ x | escape }}` is not escaped twice.
// - liquidjs's own limits are extra guards only: the hard CPU/heap bound is the worker process
//   (liquid-renderer.ts) that gets terminated.

import { IncludeTag, LayoutTag, Liquid, RenderTag } from 'liquidjs';
import type { Context, Emitter, FS } from 'liquidjs';
import { ASSET_NAME, assetUrl } from './asset-url.ts';
import { escapeHtml, htmlOf, SafeHtml, stringify } from './safe-html.ts';
import { DEFAULT_LOCALE, DEFAULT_TIME_ZONE } from '../../domain/locale-settings.ts';
import { registerAuthoringFilters, type FormatSettings } from './filters/authoring-filters.ts';

export { escapeHtml, SafeHtml } from './safe-html.ts';

export interface LiquidLimits {
  /** Characters parsed per parse() call (body or partial). */
  parseLimit: number;
  /** liquidjs's soft time limit per render, ms (checked between nodes, not inside loops). */
  renderLimitMs: number;
  /** liquidjs's allocation counter (string lengths, array sizes) per render. */
  memoryLimit: number;
}

export const DEFAULT_LIQUID_LIMITS: LiquidLimits = {
  parseLimit: 2_000_000,
  renderLimitMs: 2_000,
  memoryLimit: 8_000_000,
};

/** Derives liquidjs's soft limits from the worker's hard ones. */
export function liquidLimitsFor(timeoutMs: number, memoryMb: number): LiquidLimits {
  return {
    ...DEFAULT_LIQUID_LIMITS,
    // Below the hard kill, so the common case ends with a clean Liquid error and no respawn.
    renderLimitMs: Math.max(50, Math.floor(timeoutMs * 0.9)),
    // ~8 bytes per counted unit (array slots): keeps ranges such as (1..100000000) from even
    // being allocated.
    memoryLimit: Math.max(1_000_000, Math.floor((memoryMb * 1024 * 1024) / 8)),
  };
}

/** Lookup of partials by exact name; mutable so one engine can serve many renders in turn. */
export class PartialStore {
  private partials = new Map<string, string>();
  /** Names looked up that do not exist (publish-time analysis reports them). */
  readonly missing = new Set<string>();
  /** When true, a missing partial reads as empty instead of failing (analysis keeps going). */
  lenient = false;

  set(partials: Record<string, string>): void {
    this.partials = new Map(Object.entries(partials));
    this.missing.clear();
  }

  has(name: string): boolean {
    if (this.partials.has(name)) return true;
    this.missing.add(name);
    return this.lenient;
  }

  read(name: string): string {
    const content = this.partials.get(name);
    if (content !== undefined) return content;
    this.missing.add(name);
    if (this.lenient) return '';
    throw new Error(`partial "${name}" not found`);
  }

  asFs(): FS {
    return {
      exists: async (file) => this.has(file),
      existsSync: (file) => this.has(file),
      readFile: async (file) => this.read(file),
      readFileSync: (file) => this.read(file),
      // The partial name is the key: no directories, extensions or "..".
      resolve: (_dir, file) => file,
      contains: async () => true,
      containsSync: () => true,
      sep: '/',
      dirname: () => '',
    };
  }
}

const UNESCAPES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&#34;': '"',
  '&#39;': "'",
  '&quot;': '"',
};

/** Deepest nesting of include/render/layout: a partial that includes itself fails at once
 * instead of running into the time-out (recursion with a condition, e.g. a tree, still works). */
export const MAX_PARTIAL_DEPTH = 64;

// liquidjs's tag classes as constructors we can extend (their constructors take parser internals).
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- liquidjs's tag constructors take parser internals
type TagConstructor = new (...args: any[]) => { render(ctx: Context, emitter: Emitter): unknown };
type TagClass = Parameters<Liquid['registerTag']>[1];

/** The tag with a nesting counter around its render (renders are synchronous: one counter per engine). */
function depthGuarded(Base: TagConstructor, name: string, nesting: { depth: number }): TagClass {
  return class extends Base {
    override *render(ctx: Context, emitter: Emitter): Generator<unknown, unknown, unknown> {
      if (nesting.depth >= MAX_PARTIAL_DEPTH) {
        throw new Error(`{% ${name} %} nested more than ${MAX_PARTIAL_DEPTH} deep (does a partial include itself?)`);
      }
      nesting.depth += 1;
      try {
        return yield* super.render(ctx, emitter) as Generator<unknown, unknown, unknown>;
      } finally {
        nesting.depth -= 1;
      }
    }
  } as unknown as TagClass;
}

/**
 * How output is escaped: 'html' (body, header/footer), 'css' (the version's CSS: values become
 * safe inside CSS strings, e.g. `content: "{{ number }}"`), 'text' (the title, escaped later).
 */
export type OutputContext = 'html' | 'css' | 'text';

/** Any character that could end a CSS string, comment or <style> element, as a CSS escape. */
function escapeCss(text: string): string {
  return text.replace(/[^A-Za-z0-9 _.,:#%+-]/g, (c) => `\\${c.codePointAt(0)!.toString(16)} `);
}

function cssOf(value: unknown): string {
  return value instanceof SafeHtml ? value.html : escapeCss(stringify(value));
}

function textOf(value: unknown): string {
  return value instanceof SafeHtml ? value.html : stringify(value);
}

export interface LiquidEngineOptions {
  limits?: LiquidLimits;
  output?: OutputContext;
  /** Told every asset name `asset_url` is applied to (the renderer loads exactly those). */
  onAsset?: (name: string) => void;
  /** Locale and time zone of the formatting filters, read at each call (default en-US, UTC). */
  settings?: FormatSettings;
}

export function createLiquidEngine(
  store: PartialStore,
  limitsOrOptions: LiquidLimits | LiquidEngineOptions = DEFAULT_LIQUID_LIMITS,
): Liquid {
  const options: LiquidEngineOptions = 'parseLimit' in limitsOrOptions ? { limits: limitsOrOptions } : limitsOrOptions;
  const limits = options.limits ?? DEFAULT_LIQUID_LIMITS;
  const output = options.output ?? 'html';
  const liquid = new Liquid({
    fs: store.asFs(),
    root: [''],
    partials: [''],
    layouts: [''],
    relativeReference: false,
    extname: '',
    cache: false,
    dynamicPartials: true,
    strictFilters: true,
    strictVariables: false,
    // Variables are JSON, but never let a template walk prototypes ({{ x.constructor }}).
    ownPropertyOnly: true,
    outputEscape: output === 'css' ? cssOf : output === 'text' ? textOf : htmlOf,
    // Deterministic dates whatever the server's time zone.
    timezoneOffset: 0,
    locale: 'en-US',
    parseLimit: limits.parseLimit,
    renderLimit: limits.renderLimitMs,
    memoryLimit: limits.memoryLimit,
  });
  const nesting = { depth: 0 };
  liquid.registerTag('include', depthGuarded(IncludeTag, 'include', nesting));
  liquid.registerTag('render', depthGuarded(RenderTag, 'render', nesting));
  liquid.registerTag('layout', depthGuarded(LayoutTag, 'layout', nesting));
  liquid.registerFilter('escape', (v: unknown) => new SafeHtml(htmlOf(v)));
  liquid.registerFilter('xml_escape', (v: unknown) => new SafeHtml(htmlOf(v)));
  liquid.registerFilter('escape_once', (v: unknown) =>
    v instanceof SafeHtml
      ? v
      : new SafeHtml(escapeHtml(stringify(v).replace(/&(amp|lt|gt|#34|#39|quot);/g, (m) => UNESCAPES[m]!))),
  );
  liquid.registerFilter('newline_to_br', (v: unknown) => new SafeHtml(htmlOf(v).replace(/\r?\n/g, '<br />\n')));
  // `{{ 'logo.png' | asset_url }}`: the URL the renderer serves the workspace asset at.
  liquid.registerFilter('asset_url', (v: unknown) => {
    const name = stringify(v);
    if (!ASSET_NAME.test(name))
      throw new Error(`asset_url: ${JSON.stringify(name.slice(0, 100))} is not an asset name (e.g. 'logo.png')`);
    options.onAsset?.(name);
    return new SafeHtml(assetUrl(name));
  });
  registerAuthoringFilters(liquid, options.settings ?? { locale: DEFAULT_LOCALE, timeZone: DEFAULT_TIME_ZONE });
  return liquid;
}
