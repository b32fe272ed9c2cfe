// A template version + variables -> PDF: resolveVariables, Liquid in a worker process, Chromium,
// all under one deadline. Used by the render pipeline and by the admin preview.
//
// Every failure is a RenderError whose `kind` tells the pipeline what to do: 'permanent'
// (unknown/missing variables, invalid version, Liquid errors including its time and memory
// limits: the same input fails the same way every time) fails the generation at once;
// 'transient' (time-out of the whole render, browser crash, no browser) is retried.

import type { JsonObject, TemplateVersionContent } from '../domain/template.ts';
import type { PdfOptions } from '../domain/template.ts';
import { withSpan } from '../ops/tracing.ts';
import { validatePdfOptions } from './pdf-options.ts';
import { RenderError, toRenderError } from './render-error.ts';
import type { LiquidRenderCallOptions, LiquidRenderRequest, LiquidRenderResult } from './liquid/liquid-renderer.ts';
import { resolveVariables } from './liquid/variables.ts';
import type { PrintOptions } from './chromium/browser-pool.ts';

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
  /** Deadline of one whole render (config render.timeoutMs). */
  timeoutMs: number;
}

export interface RenderedDocument {
  pdf: Buffer;
  /** The HTML document that was printed. */
  html: string;
}

export interface DocumentRenderer {
  /** Throws RenderError (see the top of this file). */
  render(content: TemplateVersionContent, variables: JsonObject, options?: { timeoutMs?: number }): Promise<RenderedDocument>;
}

function checkContent(content: TemplateVersionContent): void {
  const problems: string[] = [];
  if (content === null || typeof content !== 'object') throw new RenderError('INVALID_TEMPLATE', 'The template version has no content');
  if (typeof content.body !== 'string') problems.push('body is not a string');
  if (typeof content.css !== 'string') problems.push('css is not a string');
  if (content.partials === null || typeof content.partials !== 'object') problems.push('partials is not an object');
  if (!Array.isArray(content.variables)) problems.push('variables is not a list');
  problems.push(...validatePdfOptions(content.pdfOptions));
  if (problems.length > 0) throw new RenderError('INVALID_TEMPLATE', `The template version is invalid: ${problems.join('; ')}`);
}

export function createDocumentRenderer(deps: DocumentRendererDeps): DocumentRenderer {
  return {
    async render(content, variables, options = {}) {
      const timeoutMs = options.timeoutMs ?? deps.timeoutMs;
      const deadline = Date.now() + timeoutMs;
      try {
        checkContent(content);
        const values = resolveVariables(content.variables, variables);
        const liquid = await withSpan('liquid render', {}, () =>
          deps.liquid.render(
            {
              body: content.body,
              css: content.css,
              partials: content.partials,
              headerTemplate: content.pdfOptions.headerTemplate,
              footerTemplate: content.pdfOptions.footerTemplate,
              variables: values,
            },
            { deadline },
          ),
        );
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new RenderError('RENDER_TIMEOUT', `Rendering did not finish within ${timeoutMs} ms`);
        const pdfOptions: PdfOptions = {
          ...content.pdfOptions,
          headerTemplate: liquid.headerTemplate,
          footerTemplate: liquid.footerTemplate,
        };
        const pdf = await withSpan('chromium print pdf', {}, () => deps.pool.printPdf(liquid.html, pdfOptions, { timeoutMs: remaining }));
        return { pdf, html: liquid.html };
      } catch (err) {
        throw toRenderError(err);
      }
    },
  };
}
