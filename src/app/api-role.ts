// The api role: the public listener (REST /v1 through the gateway, Connect, gRPC, gRPC-Web on
// one port) and the admin listener (docgen.admin.v1 behind the operator token). Stopping it
// closes both listeners; in-flight requests finish (the dual-protocol server's close waits).
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { ConnectRouter, Interceptor } from '@connectrpc/connect';
import { ApiKeyAuthenticator } from '../auth/authentication.ts';
import { PublicApi } from '../api/public-api.ts';
import { GenerationWaiter, natsFinalEventSource } from '../api/generation-waiter.ts';
import { requestIdFrom } from '../api/request-id.ts';
import { describeError } from '../domain/errors.ts';
import { GenerationService } from '../generations/generation-service.ts';
import { GenerationService as GenerationServiceDesc } from '../gen/docgen/v1/generation_pb.js';
import { BatchService as BatchServiceDesc } from '../gen/docgen/v1/batch_pb.js';
import { BatchService } from '../batches/batch-service.ts';
import { BatchHandler } from '../rpc/batch-handler.ts';
import type { Metrics } from '../ops/metrics.ts';
import { traceHttpRequest } from '../ops/tracing.ts';
import { renderJobMsgId } from '../queue/messages.ts';
import { GenerationHandler } from '../rpc/generation-handler.ts';
import { mapErrors } from '../rpc/connect-errors.ts';
import { createRestGateway } from '../../gateway/rest-gateway.ts';
import { PageTokens } from '../store/pagination.ts';
import { buildAdminListenerHandler } from './admin-listener.ts';
import { observeConnectCalls } from './connect-metrics.ts';
import { rewriteDecodeErrors } from '../rpc/decode-error-adapter.ts';
import { startDualProtocolServer, type DualProtocolServer, type RequestHandler } from './dual-protocol-server.ts';
import type { Role, RoleContext } from './role.ts';

export interface ApiRole extends Role {
  readonly publicPort: number;
  readonly adminPort: number;
}

export interface ApiRoleOptions {
  /** Test hook: runs between the generation insert and the job publish. */
  afterGenerationInsert?: ((generationId: string) => void) | undefined;
  /** Test hook: runs between a batch row's insert and its items' (a create cut off there). */
  afterBatchInsert?: ((batchId: string) => void) | undefined;
}

export async function startApiRole(ctx: RoleContext, options: ApiRoleOptions = {}): Promise<ApiRole> {
  const { config, infrastructure, logger, metrics } = ctx;
  const { repositories } = infrastructure;
  const generations = new GenerationService({
    generations: repositories.generations,
    templates: repositories.templates,
    jobs: {
      publishRenderJob: (id, route) => infrastructure.queue.publishRenderJob(id, renderJobMsgId(id), route),
    },
    urls: infrastructure.objects,
    outputUrlTtlSeconds: config.api.outputUrlTtlSeconds,
    pageTokens: new PageTokens(config.secretKey),
    onPublishError: (generationId, err) =>
      logger.warn('render job publish failed; the outbox sweeper will publish it', { generationId, err: String(err) }),
    afterInsert: options.afterGenerationInsert,
  });
  const batches = new BatchService({
    batches: repositories.batches,
    generations: repositories.generations,
    generationService: generations,
    jobs: { publishRenderJob: (id, route) => infrastructure.queue.publishRenderJob(id, renderJobMsgId(id), route) },
    afterBatchInsert: options.afterBatchInsert,
    urls: infrastructure.objects,
    outputUrlTtlSeconds: config.api.outputUrlTtlSeconds,
    onPublishError: (generationId, err) =>
      logger.warn('render job publish failed; the outbox sweeper will publish it', { generationId, err: String(err) }),
  });
  // `Prefer: wait`: one subscription to the final events for every waiting request of this process.
  const waiter = await GenerationWaiter.start(
    natsFinalEventSource(infrastructure.queue.nats.connection, infrastructure.queue.nats.prefix),
  );
  const api = new PublicApi({
    authenticator: new ApiKeyAuthenticator(repositories.apiKeys, {
      cacheMs: config.api.apiKeyCacheMs,
      defaultRateLimit: { perSecond: config.api.rateLimitPerSecond, burst: config.api.rateLimitBurst },
    }),
    rateLimits: repositories.rateLimits,
    generations,
    waiter,
    batches,
  });
  const onInternal = (cause: unknown) => logger.error('request failed', { err: describeError(cause) });
  const connect = connectNodeAdapter({
    routes: (router: ConnectRouter) => {
      router.service(GenerationServiceDesc, mapErrors(new GenerationHandler(api), onInternal));
      router.service(BatchServiceDesc, mapErrors(new BatchHandler(api, config.api.batchMaxItems), onInternal));
      rewriteDecodeErrors(router);
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
    batchMaxItems: config.api.batchMaxItems,
    onError: (err, requestId) => logger.error('request failed', { requestId, err: describeError(err) }),
    onResponse: ({ route, method, status, durationMs, requestId }) => {
      metrics.observeHttpRequest(route, method, status, durationMs / 1000);
      if (status >= 500) logger.warn('request answered with a server error', { requestId, route, method, status });
      // The access log: debug only, one line per request would drown the rest at volume.
      else if (logger.isLevelEnabled('debug'))
        logger.debug('request', { requestId, route, method, status, durationMs: Math.round(durationMs) });
      if (route === '/v1/generations' && method === 'POST' && status === 201) metrics.generationsCreated.inc();
    },
  });
  const handler: RequestHandler = (req, res) =>
    traceHttpRequest(req, res, () => {
      const path = req.url ?? '';
      if (path.startsWith('/docgen.')) {
        // The generation handler sets its own; other Connect answers (unknown procedure) get one here.
        if (!path.startsWith('/docgen.v1.GenerationService/') && !path.startsWith('/docgen.v1.BatchService/'))
          res.setHeader('X-Request-Id', requestIdFrom(req.headers['x-request-id']));
        connect(req, res);
      } else {
        void rest(req, res);
      }
    });

  let publicServer: DualProtocolServer;
  try {
    publicServer = await startDualProtocolServer(config.publicAddress, handler, config.http);
  } catch (err) {
    waiter.close();
    throw err;
  }
  const adminHandler = buildAdminListenerHandler(config, infrastructure, {
    logger,
    metrics,
    generations,
    batches,
  });
  let adminServer: DualProtocolServer;
  try {
    adminServer = await startDualProtocolServer(config.adminAddress, adminHandler.handler, config.http);
    adminHandler.bound(adminServer.port);
  } catch (err) {
    waiter.close();
    await publicServer.close().catch(() => {});
    await adminHandler.close().catch(() => {});
    throw err;
  }

  let closing: Promise<unknown> | undefined;
  const stopAccepting = async () => {
    // Waiting creates answer now with the state they re-read, so closing does not wait up to 30 s for them.
    waiter.close();
    closing ??= Promise.all([publicServer.close(), adminServer.close()]);
    await closing;
  };
  return {
    name: 'api',
    publicPort: publicServer.port,
    adminPort: adminServer.port,
    readiness: {},
    consumers: [],
    gauges: [],
    stopAccepting,
    // Closing a listener waits for its in-flight requests: stopAccepting already drained them;
    // what is left is their bookkeeping writes.
    async drain() {
      await generations.settle();
    },
    async close() {
      await stopAccepting();
      await adminHandler.close();
      // The last creates' bookkeeping writes, before the infrastructure closes the database.
      await generations.settle();
    },
  };
}

/** docgen_generations_created_total counts creates over gRPC/Connect too (REST counts in onResponse). */
function countCreatedGenerations(metrics: Metrics): Interceptor {
  return (next) => async (req) => {
    const res = await next(req);
    if (req.method.name === 'CreateGeneration') metrics.generationsCreated.inc();
    return res;
  };
}
