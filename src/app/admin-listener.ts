// The admin listener's request handler (docs/interface.md#admin-plane): the docgen.admin.v1
// services behind the operator token or a portal session (src/access/admin-gate.ts), and the
// portal's files. Served only on DOCGEN_ADMIN_ADDR, never on the public port. Template previews
// are rendered by the render role over NATS request/reply (src/render/preview-service.ts): the
// api process runs no browser.
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { adminContextValues } from '../rpc/admin-access-interceptor.ts';
import { registerAdminRoutes } from '../rpc/admin-routes.ts';
import { rewriteDecodeErrors } from '../rpc/decode-error-adapter.ts';
import { configDefault, type Config } from '../config/config.ts';
import type { GenerationService } from '../generations/generation-service.ts';
import type { BatchService } from '../batches/batch-service.ts';
import type { Logger } from '../ops/logger.ts';
import type { Metrics } from '../ops/metrics.ts';
import { previewSubject } from '../queue/preview-channel.ts';
import { analyzeTemplate, diagnoseTemplate } from '../render/liquid/analyze-template.ts';
import { createPreviewClient } from '../render/preview-service.ts';
import type { RequestHandler } from './dual-protocol-server.ts';
import type { Infrastructure } from './infrastructure.ts';
import { observeConnectCalls } from './connect-metrics.ts';
import { createPortalAssets } from '../portal/portal-assets.ts';
import { createAdminServices } from './admin-services.ts';
import { SESSION_RPC_MAX_BODY_BYTES } from '../config/limits.ts';
import { SessionService } from '../gen/docgen/admin/v1/identity_pb.js';

export interface AdminListenerHandler {
  handler: RequestHandler;
  /** Tells the router the port it was bound to (the default portal address uses it). */
  bound(port: number): void;
  close(): Promise<void>;
}

const SESSION_SERVICE_PATH = `/${SessionService.typeName}/`;

/** Time a preview may wait for a render process's answer beyond the render time-out itself. */
const PREVIEW_QUEUE_ALLOWANCE_MS = 10_000;

/** The portal's address: DOCGEN_PORTAL_BASE_URL, or the admin listener's (a wildcard host reads as loopback). */
export function portalBaseUrl(config: Config, boundPort: number | undefined): string {
  if (config.portal.baseUrl) return config.portal.baseUrl;
  const { host } = config.adminAddress;
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${boundPort ?? config.adminAddress.port}`;
}

export function buildAdminListenerHandler(
  config: Config,
  infrastructure: Infrastructure,
  ctx: {
    logger: Logger;
    metrics: Metrics;
    generations: Pick<GenerationService, 'list' | 'getInAnyWorkspace' | 'create'>;
    batches?: Pick<BatchService, 'get'>;
  },
): AdminListenerHandler {
  const logger = ctx.logger.child({ module: 'admin' });
  const renderPreview = createPreviewClient(infrastructure.queue.nats.connection, {
    subject: previewSubject(config.nats.streamPrefix),
    timeoutMs: config.render.timeoutMs + PREVIEW_QUEUE_ALLOWANCE_MS,
  });
  let boundPort: number | undefined;
  const services = createAdminServices({
    repositories: infrastructure.repositories,
    generationService: ctx.generations,
    batchService: ctx.batches,
    objects: infrastructure.objects,
    secretKey: config.secretKey,
    allowInsecureWebhookUrls: config.webhooks.allowInsecureUrls,
    allowedWebhookPorts: config.webhooks.allowedPorts,
    apiKeyLimits: {
      defaultRatePerSecond: config.api.rateLimitPerSecond,
      defaultBurst: config.api.rateLimitBurst,
      maxKeysPerWorkspace: config.api.maxKeysPerWorkspace ?? Number(configDefault('DOCGEN_API_KEYS_PER_WORKSPACE')),
    },
    adminToken: config.adminToken,
    analyzeTemplate,
    diagnoseTemplate,
    renderPreview,
    assets: { repository: infrastructure.repositories.assets, objects: infrastructure.objects, ...config.assets },
    enqueueDelivery: (job, msgId) => infrastructure.queue.publishDeliveryJob(job, msgId),
    onEnqueueError: (deliveryId, err) =>
      logger.warn('redelivery enqueue failed; the delivery sweeper will pick it up', {
        deliveryId,
        err: String(err),
      }),
    identity: {
      repositories: infrastructure.repositories.identity,
      rateLimits: infrastructure.repositories.rateLimits,
      portalBaseUrl: () => portalBaseUrl(config, boundPort),
      onAuditError: (err) => logger.error('audit event not recorded', { err: String(err) }),
    },
  });
  const adapter = (readMaxBytes: number) =>
    connectNodeAdapter({
      routes: (router) => {
        registerAdminRoutes(router, services, {
          onInternal: (cause) => logger.error('admin request failed', { err: String(cause) }),
          interceptors: [observeConnectCalls(ctx.metrics, logger)],
        });
        rewriteDecodeErrors(router);
      },
      readMaxBytes,
      contextValues: adminContextValues(config.portal.trustedProxyHops),
    });
  // Asset uploads are the largest requests.
  const handler = adapter(Math.max(16 * 1024 * 1024, config.assets.maxBytes + 1024 * 1024));
  // The session RPCs answer anyone, before any credential: they get a small limit of their own.
  const sessionHandler = adapter(SESSION_RPC_MAX_BODY_BYTES) as RequestHandler;
  // The portal (web app) shares the admin listener: GETs outside the RPC paths are its files.
  const portal = createPortalAssets();
  if (!portal.available)
    logger.warn('the portal is not built, so the admin listener serves no web app: run `npm run build:portal`');
  const rpc = handler as RequestHandler;
  return {
    handler: (req, res) => {
      if (portal.handle(req, res)) return;
      if ((req.url ?? '').startsWith(SESSION_SERVICE_PATH)) sessionHandler(req, res);
      else rpc(req, res);
    },
    bound(port) {
      boundPort = port;
      if (!config.portal.baseUrl && !['127.0.0.1', '::1', 'localhost'].includes(config.adminAddress.host)) {
        logger.warn(
          "DOCGEN_PORTAL_BASE_URL is not set: invitation links point at the admin listener's own address, and browsers reach the portal only through a loopback address (calls naming another host are refused); set it to the address people open the portal at",
          {
            portalBaseUrl: portalBaseUrl(config, port),
          },
        );
      }
    },
    async close() {},
  };
}
