// The composition root: builds a docgen process from its configuration. Each role is a
// module with its own lifecycle (api: public + admin listeners; render: browser pool and
// render workers; webhooks: dispatcher and senders); infrastructure (MongoDB, NATS, S3) is
// connected once and shared. Returns the bound ports and one `close()` that stops
// everything in order: stop accepting, drain in-flight work, close connections.
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { ConnectRouter, Interceptor } from '@connectrpc/connect';
import { ApiKeyAuthenticator } from '../auth/api-key-authenticator.ts';
import { PublicApi } from '../api/public-api.ts';
import { requestIdFrom } from '../api/request-id.ts';
import type { Config } from '../config/config.ts';
import { GenerationService } from '../generations/generation-service.ts';
import { PageTokenCodec } from '../generations/page-token.ts';
import { GenerationService as GenerationServiceDesc } from '../gen/docgen/v1/generation_pb.js';
import { createLogger, type Logger } from '../ops/logger.ts';
import { createMetrics, type Metrics } from '../ops/metrics.ts';
import { createOpsServer, type OpsServer } from '../ops/ops-server.ts';
import { GenerationHandler } from '../rpc/generation-handler.ts';
import { mapErrors } from '../rpc/connect-errors.ts';
import { createRestGateway } from '../../gateway/rest-gateway.ts';
import { startDualProtocolServer, type DualProtocolServer, type RequestHandler } from './dual-protocol-server.ts';
import { connectInfrastructure, type Infrastructure } from './infrastructure.ts';
import { RENDER_CONSUMER, startRenderRole, type RenderRole } from './render-role.ts';
import { startWebhooksRole, WEBHOOK_DISPATCHER_CONSUMER, WEBHOOK_SENDER_CONSUMER, type WebhooksRole } from './webhooks-role.ts';
import { buildAdminRouter } from './admin-role.ts';
import { observeConnectCalls } from './connect-metrics.ts';
import { registerConsumerLagMetrics, type WatchedConsumer } from '../queue/consumer-lag-metrics.ts';
import { describeError } from '../domain/errors.ts';

export interface App {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  infrastructure: Infrastructure;
  /** Bound ports (useful with port 0 in tests). */
  publicPort?: number;
  adminPort?: number;
  opsPort: number;
  ops: OpsServer;
  /** Stops taking work (listeners, consumers); in-flight work finishes or is handed back. */
  stopAccepting(): Promise<void>;
  /** Waits for in-flight work until the signal aborts, then hands the rest back. */
  drain(signal: AbortSignal): Promise<void>;
  /** Closes everything (calls stopAccepting and drain first if needed). */
  close(): Promise<void>;
}

export interface BuildAppOptions {
  logger?: Logger;
  /** Runs between the generation insert and the job publish (the crash tests kill the process
   * here: test/harness/serve-with-faults.ts). */
  afterGenerationInsert?: (generationId: string) => void;
}

export async function buildApp(config: Config, options: BuildAppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger({ level: config.logLevel, role: config.roles.join(',') });
  const metrics = createMetrics({ defaultLabels: { role: config.roles.join(',') } });
  const ops = createOpsServer({ address: config.opsAddress, metrics, logger });
  const infrastructure = await connectInfrastructure(config, { logger, metrics, ops });

  const closers: { name: string; stopAccepting?: () => Promise<void>; drain?: (signal: AbortSignal) => Promise<void>; close?: () => Promise<void> }[] = [];
  let publicServer: DualProtocolServer | undefined;
  let adminServer: DualProtocolServer | undefined;
  let render: RenderRole | undefined;
  let webhooks: WebhooksRole | undefined;

  try {
    if (config.roles.includes('api')) {
      const { repositories } = infrastructure;
      const generations = new GenerationService({
        generations: repositories.generations,
        templates: repositories.templates,
        jobs: { publishRenderJob: (id) => infrastructure.queue.publishRenderJob(id, id) },
        urls: infrastructure.objects,
        pageTokens: new PageTokenCodec(config.secretKey),
        onPublishError: (generationId, err) => logger.warn('render job publish failed; the outbox sweeper will publish it', { generationId, err: String(err) }),
        afterInsert: options.afterGenerationInsert,
      });
      const api = new PublicApi({
        authenticator: new ApiKeyAuthenticator(repositories.apiKeys, {
          cacheMs: config.api.apiKeyCacheMs,
          defaultRateLimit: { perSecond: config.api.rateLimitPerSecond, burst: config.api.rateLimitBurst },
        }),
        rateLimits: repositories.rateLimits,
        generations,
      });
      const onInternal = (cause: unknown) => logger.error('request failed', { err: describeError(cause) });
      const connect = connectNodeAdapter({
        routes: (router: ConnectRouter) => {
          router.service(GenerationServiceDesc, mapErrors(new GenerationHandler(api), onInternal));
        },
        readMaxBytes: config.api.maxBodyBytes,
        interceptors: [observeConnectCalls(metrics, logger), countCreatedGenerations(metrics)],
        grpc: true,
        grpcWeb: true,
        connect: true,
      });
      const rest = createRestGateway({
        api,
        maxBodyBytes: config.api.maxBodyBytes,
        onError: (err, requestId) => logger.error('request failed', { requestId, err: describeError(err) }),
        onResponse: ({ route, method, status, durationMs, requestId }) => {
          metrics.observeHttpRequest(route, method, status, durationMs / 1000);
          if (status >= 500) logger.warn('request answered with a server error', { requestId, route, method, status });
          // The access log: debug only, one line per request would drown the rest at volume.
          else if (logger.isLevelEnabled('debug')) logger.debug('request', { requestId, route, method, status, durationMs: Math.round(durationMs) });
          if (route === '/v1/generations' && method === 'POST' && status === 201) metrics.generationsCreated.inc();
        },
      });
      const handler: RequestHandler = (req, res) => {
        const path = req.url ?? '';
        if (path.startsWith('/docgen.')) {
          // The generation handler sets its own; other Connect answers (unknown procedure) get one here.
          if (!path.startsWith('/docgen.v1.GenerationService/')) res.setHeader('X-Request-Id', requestIdFrom(req.headers['x-request-id']));
          connect(req, res);
        } else {
          void rest(req, res);
        }
      };
      publicServer = await startDualProtocolServer(config.publicAddress, handler);

      const adminRouter = buildAdminRouter(config, infrastructure, { logger, metrics, generations });
      adminServer = await startDualProtocolServer(config.adminAddress, adminRouter.handler);
      adminRouter.bound(adminServer.port);
      closers.push({
        name: 'api',
        stopAccepting: async () => {
          await Promise.all([publicServer?.close(), adminServer?.close()]);
        },
        close: () => adminRouter.close(),
      });
    }

    if (config.roles.includes('render')) {
      render = await startRenderRole(config, infrastructure, { logger, metrics, ops });
      closers.push({ name: 'render', stopAccepting: () => render!.stopAccepting(), drain: (s) => render!.drain(s), close: () => render!.close() });
    }

    if (config.roles.includes('webhooks')) {
      webhooks = await startWebhooksRole(config, infrastructure, { logger, metrics });
      closers.push({ name: 'webhooks', stopAccepting: () => webhooks!.stopAccepting(), drain: (s) => webhooks!.drain(s), close: () => webhooks!.close() });
    }

    const streams = infrastructure.queue.nats.names.streams;
    const lagOf: WatchedConsumer[] = [];
    if (render) lagOf.push({ stream: streams.render, consumer: RENDER_CONSUMER });
    if (webhooks) lagOf.push({ stream: streams.events, consumer: WEBHOOK_DISPATCHER_CONSUMER }, { stream: streams.deliveries, consumer: WEBHOOK_SENDER_CONSUMER });
    const unregisterLag = registerConsumerLagMetrics(metrics, infrastructure.queue.nats, lagOf);
    closers.push({ name: 'consumer-lag-metrics', close: async () => unregisterLag() });

    await ops.listen();
  } catch (err) {
    for (const c of closers.reverse()) await c.close?.().catch(() => {});
    await publicServer?.close().catch(() => {});
    await adminServer?.close().catch(() => {});
    await ops.close().catch(() => {});
    await infrastructure.close().catch(() => {});
    throw err;
  }

  let accepting = true;
  let drained = false;
  let closed: Promise<void> | undefined;
  const app: App = {
    config,
    logger,
    metrics,
    infrastructure,
    publicPort: publicServer?.port,
    adminPort: adminServer?.port,
    opsPort: ops.port,
    ops,
    async stopAccepting() {
      if (!accepting) return;
      accepting = false;
      ops.setShuttingDown();
      await Promise.all(closers.map((c) => c.stopAccepting?.()));
    },
    async drain(signal) {
      await app.stopAccepting();
      if (drained) return;
      drained = true;
      await Promise.all(closers.map((c) => c.drain?.(signal)));
    },
    close() {
      closed ??= (async () => {
        await app.drain(AbortSignal.timeout(config.shutdownGraceMs));
        for (const c of [...closers].reverse()) {
          await c.close?.().catch((err: unknown) => logger.warn('error while closing', { module: c.name, err: describeError(err) }));
        }
        await ops.close().catch(() => {});
        await infrastructure.close();
      })();
      return closed;
    },
  };
  return app;
}

/** docgen_generations_created_total counts creates over gRPC/Connect too (REST counts in onResponse). */
function countCreatedGenerations(metrics: Metrics): Interceptor {
  return (next) => async (req) => {
    const res = await next(req);
    if (req.method.name === 'CreateGeneration') metrics.generationsCreated.inc();
    return res;
  };
}
