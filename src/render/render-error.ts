// The one error type of rendering: the engine, the Chromium pool and the render pipeline all
// throw RenderError, and callers decide by its `code` (through `permanent`), never by message or
// class name. A permanent error fails the generation at once (docs/interface.md#failures), a
// transient one is retried with back-off.
// Messages are shown to API clients as the generation's `error`: they name the problem in the
// author's terms and never carry internals (stack traces, paths, errno codes, Chromium output).

import type { TemplateDiagnostic } from '../domain/template-diagnostics.ts';

export type RenderErrorKind = 'permanent' | 'transient';

export type RenderErrorCode =
  /** The generation's template does not exist, is archived or has no published version. */
  | 'TEMPLATE_UNAVAILABLE'
  /** A supplied variable the template does not declare. */
  | 'UNKNOWN_VARIABLE'
  /** A required declared variable was not supplied. */
  | 'MISSING_VARIABLE'
  /** Supplied variables break their declared schemas (typed variables). */
  | 'INVALID_VARIABLE'
  /** The stored version itself is unusable (bad PDF options, unparsable Liquid). */
  | 'INVALID_TEMPLATE'
  /** The template uses an asset (asset_url) the workspace does not have. */
  | 'MISSING_ASSET'
  /** Liquid failed while rendering (undefined filter, missing partial, limits, ...). */
  | 'LIQUID_ERROR'
  /** Liquid used up its CPU budget: an endless or huge loop fails the same way every time. */
  | 'LIQUID_TIMEOUT'
  /** Liquid used up its heap: same input, same result. */
  | 'LIQUID_MEMORY'
  /** The document did not finish loading within its bound (something in it waits forever). */
  | 'PAGE_LOAD_TIMEOUT'
  /** The document is too large to print (its HTML is over the size bound). */
  | 'DOCUMENT_TOO_LARGE'
  /** This render crashed the browser page again after a crash on an earlier attempt. */
  | 'CRASHED_REPEATEDLY'
  /** The whole render (or the Chromium step) ran past its deadline. */
  | 'RENDER_TIMEOUT'
  /** Chromium or the page's renderer process died during the render. */
  | 'BROWSER_CRASHED'
  /** No browser page could be had (pool stopped, Chromium failed to start). */
  | 'BROWSER_UNAVAILABLE'
  /** The e-invoice data (eInvoice.from) is not a valid invoice: names the rule and the element. */
  | 'INVALID_E_INVOICE'
  /** The finished PDF fails a requirement of a conformance level it claims: names the rule. */
  | 'NOT_CONFORMING'
  /** The signing certificate cannot sign (expired, not yet valid, wrong password, no key). */
  | 'SIGNING_FAILED'
  /** The timestamp authority did not answer with a usable timestamp (retried). */
  | 'TIMESTAMP_UNAVAILABLE'
  /** Anything unexpected in the engine itself. */
  | 'INTERNAL';

const KINDS: Record<RenderErrorCode, RenderErrorKind> = {
  TEMPLATE_UNAVAILABLE: 'permanent',
  UNKNOWN_VARIABLE: 'permanent',
  MISSING_VARIABLE: 'permanent',
  INVALID_VARIABLE: 'permanent',
  INVALID_TEMPLATE: 'permanent',
  MISSING_ASSET: 'permanent',
  LIQUID_ERROR: 'permanent',
  LIQUID_TIMEOUT: 'permanent',
  LIQUID_MEMORY: 'permanent',
  PAGE_LOAD_TIMEOUT: 'permanent',
  DOCUMENT_TOO_LARGE: 'permanent',
  CRASHED_REPEATEDLY: 'permanent',
  RENDER_TIMEOUT: 'transient',
  BROWSER_CRASHED: 'transient',
  BROWSER_UNAVAILABLE: 'transient',
  INVALID_E_INVOICE: 'permanent',
  NOT_CONFORMING: 'permanent',
  SIGNING_FAILED: 'permanent',
  TIMESTAMP_UNAVAILABLE: 'transient',
  INTERNAL: 'transient',
};

export class RenderError extends Error {
  readonly code: RenderErrorCode;
  readonly kind: RenderErrorKind;
  /** Where in the template a Liquid error happened, when known (previews show it at its line). */
  readonly diagnostic: TemplateDiagnostic | undefined;

  constructor(
    code: RenderErrorCode,
    message: string,
    options: { cause?: unknown; diagnostic?: TemplateDiagnostic | undefined } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RenderError';
    this.code = code;
    this.kind = KINDS[code];
    this.diagnostic = options.diagnostic;
  }

  /** True when retrying cannot help: the generation should fail at once. */
  get permanent(): boolean {
    return this.kind === 'permanent';
  }
}

/** True for the codes above (a code that travelled over the wire, e.g. a preview reply). */
export function isRenderErrorCode(code: string): code is RenderErrorCode {
  return Object.hasOwn(KINDS, code);
}

export function isRenderError(err: unknown): err is RenderError {
  return err instanceof RenderError;
}

/** Whether a render error code names a failure retrying cannot fix. */
export function isPermanentCode(code: RenderErrorCode): boolean {
  return KINDS[code] === 'permanent';
}

/** Wraps anything thrown inside the engine; RenderErrors pass through unchanged. */
export function toRenderError(err: unknown, fallback: RenderErrorCode = 'INTERNAL'): RenderError {
  if (err instanceof RenderError) return err;
  return new RenderError(
    fallback,
    fallback === 'INTERNAL' ? 'Internal render error' : String((err as Error)?.message ?? err),
    {
      cause: err,
    },
  );
}
