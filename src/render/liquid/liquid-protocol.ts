// Messages between LiquidRenderer (parent) and liquid-worker.ts (child process), sent over IPC
// with structured-clone ("advanced") serialization.

import type { JsonObject } from '../../domain/template.ts';
import type { LiquidLimits } from './liquid-engine.ts';
import type { TemplateDiagnostic } from '../../domain/template-diagnostics.ts';
import type { TypedDeclaration } from '../../domain/variable-schema.ts';

export interface LiquidWorkerData {
  limits: LiquidLimits;
}

export interface LiquidRequest {
  id: number;
  body: string;
  css: string;
  partials: Record<string, string>;
  headerTemplate: string;
  footerTemplate: string;
  /** '' when the first page has no templates of its own. */
  firstPageHeaderTemplate: string;
  firstPageFooterTemplate: string;
  /** Liquid source of the title; '' means defaultTitle. */
  title: string;
  defaultTitle: string;
  /** <html lang>; '' for none. */
  language: string;
  variables: JsonObject;
  /** Declarations with a schema: the variables are checked against them before rendering. */
  typed: TypedDeclaration[];
  /** The formatting filters' locale and time zone. */
  locale: string;
  timeZone: string;
  /** liquidjs's soft time limit for this render (the hard one is terminate()). */
  renderLimitMs: number;
}

export type LiquidResponse =
  | { type: 'ready' }
  | { type: 'result'; id: number; result: LiquidResult }
  /**
   * reason 'time': liquidjs's own time limit fired (classified like the hard time-out);
   * 'variables': the variables break their declared schemas (message lists every problem).
   */
  | {
      type: 'error';
      id: number;
      message: string;
      reason: 'time' | 'error' | 'variables';
      diagnostic?: TemplateDiagnostic;
    };

/** What one render produces. */
export interface LiquidResult {
  /** Full HTML document: doctype, title, the CSS, the rendered body. */
  html: string;
  /** The rendered CSS (header/footer templates get it too). */
  css: string;
  /** Rendered header/footer templates ('' when none). */
  headerTemplate: string;
  footerTemplate: string;
  firstPageHeaderTemplate: string;
  firstPageFooterTemplate: string;
  /** The rendered title, plain text. */
  title: string;
  /** Asset names asset_url was applied to. */
  assets: string[];
}
