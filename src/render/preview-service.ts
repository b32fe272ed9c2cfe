// The render role's side of template previews: renders unsaved or stored content with the
// same document renderer, sandbox, limits and network walls as production renders (it is the
// same engine), on pages of its own so that neither kind of work can starve the other, and
// stores nothing. Requests arrive over NATS (src/queue/preview-channel.ts).
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../ops/logger.ts';
import type { Metrics } from '../ops/metrics.ts';
import { unavailable } from '../domain/errors.ts';
import {
  requestPreview,
  servePreviews,
  type PreviewFailure,
  type PreviewRequest,
  type PreviewServer,
} from '../queue/preview-channel.ts';
import type { DocumentRenderer } from './document-renderer.ts';
import { isRenderErrorCode, RenderError } from './render-error.ts';

export interface PreviewServiceOptions {
  subject: string;
  /** config.previews.concurrency: the engine has this many pages beyond production's. */
  concurrency: number;
  renderer: DocumentRenderer;
  logger: Logger;
  metrics?: Pick<Metrics, 'observePreview'> | undefined;
}

/** What the requester learns of a failed preview: the render error's code and words, never internals. */
export function previewFailureOf(err: unknown): PreviewFailure {
  if (err instanceof RenderError) {
    const failure: PreviewFailure = {
      code: err.code,
      message: err.kind === 'permanent' ? err.message : `${err.message}; retry the preview`,
    };
    if (err.diagnostic) failure.diagnostic = err.diagnostic;
    return failure;
  }
  return { code: 'INTERNAL', message: 'Internal render error; retry the preview' };
}

/** RenderError again on the requesting side, so callers handle one error type. */
export function renderErrorOf(failure: PreviewFailure): RenderError {
  return new RenderError(isRenderErrorCode(failure.code) ? failure.code : 'INTERNAL', failure.message, {
    diagnostic: failure.diagnostic,
  });
}

export function startPreviewService(nc: NatsConnection, options: PreviewServiceOptions): PreviewServer {
  const { logger } = options;
  return servePreviews(nc, {
    subject: options.subject,
    concurrency: options.concurrency,
    render: async (request) =>
      (await options.renderer.render(request.content, request.variables, request.options ?? {})).pdf,
    describeFailure: (err) => {
      if (!(err instanceof RenderError) || err.kind === 'transient')
        logger.warn('preview render failed', { err: String(err) });
      return previewFailureOf(err);
    },
    onOutcome: (outcome, ms) => {
      options.metrics?.observePreview(outcome, ms / 1000);
      if (outcome === 'busy') logger.warn('preview refused: this render process has no room for more previews');
      else logger.debug(`preview ${outcome}`, { durationMs: Math.round(ms) });
    },
    onError: (err) => logger.warn('preview request failed', { err: String(err) }),
  });
}

/** Renders a preview on some render process; what the admin plane's templates call. */
export type PreviewRenderer = (
  content: PreviewRequest['content'],
  variables: PreviewRequest['variables'],
  options?: PreviewRequest['options'],
) => Promise<{ pdf: Uint8Array; renderMs: number }>;

/**
 * The api role's way to a preview. Throws DomainError UNAVAILABLE when no render process runs
 * or all are busy, and the render's own RenderError when it failed (the same codes, messages
 * and Liquid positions a generation would get).
 */
export function createPreviewClient(
  nc: NatsConnection,
  options: { subject: string; timeoutMs: number },
): PreviewRenderer {
  return async (content, variables, renderOptions) => {
    // The sample data travels as the variables when it is what the preview uses; not twice.
    const { sampleData: _unused, ...rest } = content;
    const reply = await requestPreview(
      nc,
      { content: rest, variables, ...(renderOptions ? { options: renderOptions } : {}) },
      options,
    );
    if (reply.ok) return { pdf: reply.pdf, renderMs: reply.renderMs };
    if (reply.error.code === 'BUSY') throw unavailable(reply.error.message);
    throw renderErrorOf(reply.error);
  };
}
