// The one error type the render engine throws. The pipeline only needs `kind`: a permanent
// error fails the generation at once (docs/interface.md#failures), a transient one is retried with back-off.
// Messages are shown to API clients as the generation's `error`: they name the problem and
// never carry internals (stack traces, paths, Chromium output).

import type { TemplateDiagnostic } from '../domain/template-diagnostics.ts';

export type RenderErrorKind = 'permanent' | 'transient';

export type RenderErrorCode =
  /** A supplied variable the template does not declare. */
  | 'UNKNOWN_VARIABLE'
  /** A required declared variable was not supplied. */
  | 'MISSING_VARIABLE'
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
  /** The whole render (or the Chromium step) ran past its deadline. */
  | 'RENDER_TIMEOUT'
  /** Chromium or the page's renderer process died during the render. */
  | 'BROWSER_CRASHED'
  /** No browser page could be had (pool stopped, Chromium failed to start). */
  | 'BROWSER_UNAVAILABLE'
  /** Anything unexpected in the engine itself. */
  | 'INTERNAL';

const KINDS: Record<RenderErrorCode, RenderErrorKind> = {
  UNKNOWN_VARIABLE: 'permanent',
  MISSING_VARIABLE: 'permanent',
  INVALID_TEMPLATE: 'permanent',
  MISSING_ASSET: 'permanent',
  LIQUID_ERROR: 'permanent',
  LIQUID_TIMEOUT: 'permanent',
  LIQUID_MEMORY: 'permanent',
  RENDER_TIMEOUT: 'transient',
  BROWSER_CRASHED: 'transient',
  BROWSER_UNAVAILABLE: 'transient',
  INTERNAL: 'transient',
};

export class RenderError extends Error {
  readonly code: RenderErrorCode;
  readonly kind: RenderErrorKind;
  /** Where in the template a Liquid error happened, when known (previews show it at its line). */
  readonly diagnostic: TemplateDiagnostic | undefined;

  constructor(code: RenderErrorCode, message: string, options: { cause?: unknown; diagnostic?: TemplateDiagnostic | undefined } = {}) {
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

/** Wraps anything thrown inside the engine; RenderErrors pass through unchanged. */
export function toRenderError(err: unknown, fallback: RenderErrorCode = 'INTERNAL'): RenderError {
  if (err instanceof RenderError) return err;
  return new RenderError(fallback, fallback === 'INTERNAL' ? 'Internal render error' : String((err as Error)?.message ?? err), {
    cause: err,
  });
}
