// A template version + variables -> PDF: resolveVariables, Liquid in a worker process, Chromium,
// all under one deadline. Used by the render pipeline and by the admin preview.
//
// Every failure is a RenderError whose `kind` tells the pipeline what to do: 'permanent'
// (unknown/missing variables, invalid version, Liquid errors including its time and memory
// limits: the same input fails the same way every time) fails the generation at once;
// 'transient' (time-out of the whole render, browser crash, no browser) is retried.

import { withDocumentDefaults, type JsonObject, type TemplateVersionContent } from '../domain/template.ts';
import type { PdfOptions } from '../domain/document-settings.ts';
import { assetDataUrl, type AssetSource, type RenderAssets } from './asset-loader.ts';
import { ASSET_URL_PREFIX, assetUrl } from './liquid/asset-url.ts';
import { styleElement } from './liquid/html-document.ts';
import {
  documentSettingsConflicts,
  documentSettingsOf,
  validateDocumentSettings,
} from './finishing/document-settings.ts';
import { finishPdf, needsFinishing } from './finishing/pipeline.ts';
import type { CertificateSource } from './finishing/signing-identity.ts';
import type { TimestampAuthority } from './finishing/timestamp.ts';
import { withSpan } from '../ops/tracing.ts';
import { validatePdfOptions } from './pdf-options.ts';
import { RenderError, toRenderError } from './render-error.ts';
import type { LiquidRenderCallOptions, LiquidRenderRequest, LiquidRenderResult } from './liquid/liquid-renderer.ts';
import { resolveVariables } from './liquid/variables.ts';
import type { PrintOptions } from './chromium/browser-pool.ts';
import { timeStage, type StageObserver } from './render-stages.ts';

export { RenderError, isRenderError } from './render-error.ts';
export type { RenderErrorCode, RenderErrorKind } from './render-error.ts';

/** The Liquid step (LiquidRenderer). */
export interface LiquidStep {
  render(request: LiquidRenderRequest, options?: LiquidRenderCallOptions): Promise<LiquidRenderResult>;
}

/** The Chromium step (BrowserPool). */
export interface PdfStep {
  printPdf(html: string, pdfOptions: PdfOptions, options: PrintOptions): Promise<Buffer>;
}

export interface DocumentRendererDeps {
  liquid: LiquidStep;
  pool: PdfStep;
  /** Workspace assets (asset_url); without it, a template that uses one fails. */
  assets?: AssetSource | undefined;
  /** Deadline of one whole render (config render.timeoutMs). */
  timeoutMs: number;
  /** Signing identities for versions with `sign` (without it, such versions fail to render). */
  certificates?: CertificateSource | undefined;
  /** The operator's RFC 3161 timestamp authority: signatures become PAdES B-T. */
  timestamp?: TimestampAuthority | undefined;
}

export interface RenderedDocument {
  pdf: Buffer;
  /** The HTML document that was printed. */
  html: string;
}

export interface RenderOptions {
  timeoutMs?: number | undefined;
  /** Whose assets asset_url names (`ws_…`). */
  workspaceId?: string | undefined;
  /** The PDF title when the version sets none. */
  templateName?: string | undefined;
  /** Told how long each stage of this render took (render-stages.ts). */
  onStage?: StageObserver | undefined;
  /** A test generation's render: every page gets the "TEST" stamp (docs/interface.md#test-mode). */
  test?: boolean | undefined;
}

export interface DocumentRenderer {
  /** Throws RenderError (see the top of this file). */
  render(content: TemplateVersionContent, variables: JsonObject, options?: RenderOptions): Promise<RenderedDocument>;
}

/** Asset URLs in rendered header/footer/CSS text replaced by data: URLs. */
function inlineAssets(text: string, assets: RenderAssets): string {
  if (assets.size === 0 || !text.includes(ASSET_URL_PREFIX)) return text;
  let out = text;
  for (const [name, asset] of assets) out = out.split(assetUrl(name)).join(assetDataUrl(asset));
  return out;
}

/**
 * The version's CSS for header/footer templates: whatever would load from elsewhere goes
 * (Chromium's header/footer frames cannot load anything, and an external stylesheet or font
 * there crashes the print); assets are already data: URLs by then.
 */
function furnitureCss(css: string): string {
  return css.replace(/@import\s[^;]*;?/gi, '').replace(/url\(\s*(['"]?)(?!data:)[^'")]*\1\s*\)/gi, 'url("data:,")');
}

/**
 * A header/footer template as Chromium gets it: the version's CSS first (Chromium prints
 * these templates as documents of their own that can load nothing), assets inlined.
 */
function pageFurniture(template: string, style: string, assets: RenderAssets): string {
  return template === '' ? '' : style + inlineAssets(template, assets);
}

function checkContent(content: TemplateVersionContent, templateName: string): void {
  const problems: string[] = [];
  if (content === null || typeof content !== 'object')
    throw new RenderError('INVALID_TEMPLATE', 'The template version has no content');
  if (typeof content.body !== 'string') problems.push('body is not a string');
  if (typeof content.css !== 'string') problems.push('css is not a string');
  if (content.partials === null || typeof content.partials !== 'object') problems.push('partials is not an object');
  if (!Array.isArray(content.variables)) problems.push('variables is not a list');
  problems.push(...validatePdfOptions(content.pdfOptions));
  const settings = documentSettingsOf(content);
  const settingsProblems = validateDocumentSettings(settings);
  problems.push(...settingsProblems);
  // What publishing refuses also fails an unsaved preview; the title falls back to the template's name.
  if (settingsProblems.length === 0 && problems.length === 0)
    problems.push(
      ...documentSettingsConflicts(settings, {
        encrypted: Boolean(content.pdfOptions.protection),
        title: (typeof content.title === 'string' && content.title) || templateName,
      }),
    );
  if (problems.length > 0)
    throw new RenderError('INVALID_TEMPLATE', `The template version is invalid: ${problems.join('; ')}`);
}

export function createDocumentRenderer(deps: DocumentRendererDeps): DocumentRenderer {
  return {
    async render(content, variables, options = {}) {
      const timeoutMs = options.timeoutMs ?? deps.timeoutMs;
      const deadline = Date.now() + timeoutMs;
      try {
        checkContent(content, options.templateName ?? '');
        const c = withDocumentDefaults(content);
        const settings = documentSettingsOf(c);
        const o = c.pdfOptions as Required<Omit<PdfOptions, 'protection'>> & Pick<PdfOptions, 'protection'>;
        const values = resolveVariables(c.variables, variables);
        const onStage = options.onStage;
        const liquid = await withSpan('liquid render', {}, () =>
          timeStage(onStage, 'liquid', () =>
            deps.liquid.render(
              {
                body: c.body,
                css: c.css,
                partials: c.partials,
                headerTemplate: o.headerTemplate,
                footerTemplate: o.footerTemplate,
                firstPageHeaderTemplate: o.firstPageHeaderTemplate,
                firstPageFooterTemplate: o.firstPageFooterTemplate,
                title: c.title,
                defaultTitle: options.templateName ?? '',
                language: c.metadata.language,
                variables: values,
                typed: c.variables.filter((d) => d.schema !== undefined),
                locale: c.locale,
                timeZone: c.timeZone,
              },
              { deadline },
            ),
          ),
        );
        let assets: RenderAssets = new Map();
        if (liquid.assets.length > 0) {
          if (!deps.assets || !options.workspaceId)
            throw new RenderError(
              'MISSING_ASSET',
              'This renderer has no workspace assets; asset_url cannot be used here',
            );
          const workspaceId = options.workspaceId;
          assets = await timeStage(onStage, 'assets', () => deps.assets!.load(workspaceId, liquid.assets));
        }
        const headerFooter =
          o.headerTemplate !== '' ||
          o.footerTemplate !== '' ||
          o.firstPageHeaderTemplate !== '' ||
          o.firstPageFooterTemplate !== '';
        const style = headerFooter ? styleElement(furnitureCss(inlineAssets(liquid.css, assets))) : '';
        const furniture = (t: string) => pageFurniture(t, style, assets);
        const pdfOptions: PdfOptions = {
          ...o,
          headerTemplate: furniture(liquid.headerTemplate),
          footerTemplate: furniture(liquid.footerTemplate),
        };
        const remaining = () => {
          const left = deadline - Date.now();
          if (left <= 0) throw new RenderError('RENDER_TIMEOUT', `Rendering did not finish within ${timeoutMs} ms`);
          return left;
        };
        const print = (opts: PdfOptions) =>
          withSpan('chromium print pdf', {}, () =>
            deps.pool.printPdf(liquid.html, opts, {
              timeoutMs: remaining(),
              assets,
              onStage,
              outline: settings.outline === true,
            }),
          );
        let firstPage: Buffer | undefined;
        let pdf: Buffer;
        if (o.firstPageHeaderTemplate !== '' || o.firstPageFooterTemplate !== '') {
          // Chromium has one header/footer for all pages: print again with the first page's,
          // whole (so totalPages stays right), and take its first page.
          const firstOptions: PdfOptions = {
            ...pdfOptions,
            headerTemplate:
              liquid.firstPageHeaderTemplate === ''
                ? pdfOptions.headerTemplate
                : furniture(liquid.firstPageHeaderTemplate),
            footerTemplate:
              liquid.firstPageFooterTemplate === ''
                ? pdfOptions.footerTemplate
                : furniture(liquid.firstPageFooterTemplate),
          };
          [pdf, firstPage] = await Promise.all([print(pdfOptions), print(firstOptions)]);
        } else {
          pdf = await print(pdfOptions);
        }
        const finishing = {
          metadata: c.metadata,
          protection: o.protection,
          firstPage,
          settings,
          variables: values,
          workspaceId: options.workspaceId,
          testStamp: options.test === true,
        };
        if (needsFinishing(finishing)) {
          pdf = await withSpan('finish pdf', {}, () =>
            finishPdf(pdf, finishing, {
              assets: deps.assets,
              certificates: deps.certificates,
              timestamp: deps.timestamp,
              onStage,
            }),
          );
        }
        return { pdf, html: liquid.html };
      } catch (err) {
        throw toRenderError(err);
      }
    },
  };
}
