// The admin listener (docs/interface.md#admin-plane): the docgen.admin.v1 services behind the
// operator token. Served only on DOCGEN_ADMIN_ADDR, never on the public port. Template previews
// are rendered by the render role over NATS request/reply (src/render/preview-service.ts): the
// api process runs no browser.
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { registerAdminServices } from '../rpc/admin-services.ts';
import type { Config } from '../config/config.ts';
import type { GenerationService } from '../generations/generation-service.ts';
import type { Logger } from '../ops/logger.ts';
import type { Metrics } from '../ops/metrics.ts';
import { previewSubject } from '../queue/preview-channel.ts';
import { analyzeTemplate, diagnoseTemplate } from '../render/liquid/analyze-template.ts';
import { createPreviewClient } from '../render/preview-service.ts';
import type { RequestHandler } from './dual-protocol-server.ts';
import type { Infrastructure } from './infrastructure.ts';
import { observeConnectCalls } from './connect-metrics.ts';

export interface AdminRouter {
  handler: RequestHandler;
  close(): Promise<void>;
}

/** Time a preview may wait for a render process's answer beyond the render time-out itself. */
const PREVIEW_QUEUE_ALLOWANCE_MS = 10_000;

export function buildAdminRouter(
  config: Config,
  infrastructure: Infrastructure,
  ctx: { logger: Logger; metrics: Metrics; generations: Pick<GenerationService, 'list' | 'getInAnyWorkspace'> },
): AdminRouter {
  const logger = ctx.logger.child({ module: 'admin' });
  const renderPreview = createPreviewClient(infrastructure.queue.nats.connection, {
    subject: previewSubject(config.nats.streamPrefix),
    timeoutMs: config.render.timeoutMs + PREVIEW_QUEUE_ALLOWANCE_MS,
  });
  const handler = connectNodeAdapter({
    routes: (router) => {
      registerAdminServices(router, {
        repositories: infrastructure.repositories,
        generationService: ctx.generations,
        objects: infrastructure.objects,
        secretKey: config.secretKey,
        allowInsecureWebhookUrls: config.webhooks.allowInsecureUrls,
        adminToken: config.adminToken,
        analyzeTemplate,
        diagnoseTemplate,
        renderPreview,
        enqueueDelivery: (deliveryId) => infrastructure.queue.publishDeliveryJob(deliveryId, `${deliveryId}:redeliver:${Date.now()}`),
        onEnqueueError: (deliveryId, err) => logger.warn('redelivery enqueue failed; the delivery sweeper will pick it up', { deliveryId, err: String(err) }),
        onInternal: (cause) => logger.error('admin request failed', { err: String(cause) }),
        interceptors: [observeConnectCalls(ctx.metrics, logger)],
      });
    },
    readMaxBytes: 16 * 1024 * 1024,
  });
  return {
    handler: handler as RequestHandler,
    async close() {},
  };
}
