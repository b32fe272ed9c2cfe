// Connections every role shares: MongoDB (rows), NATS JetStream (jobs and events) and the
// object store (PDFs), plus the repositories over MongoDB. Connected once per process. A
// database or broker that is not there yet is waited for (wait-for-dependency.ts); each
// registers a readiness check so /readyz names a dependency that is awaited or went away.
import type { Config } from '../config/config.ts';
import { isDomainError } from '../domain/errors.ts';
import type { Logger } from '../ops/logger.ts';
import type { Metrics } from '../ops/metrics.ts';
import type { OpsServer } from '../ops/ops-server.ts';
import { createDocgenQueue, type DocgenQueue } from '../queue/docgen-queue.ts';
import { connectNats, type NatsQueue } from '../queue/jetstream.ts';
import { createObjectStore, type ObjectStore } from '../storage/object-store.ts';
import { ApiKeysRepository } from '../store/api-keys-repository.ts';
import { AssetsRepository } from '../store/assets-repository.ts';
import { CertificatesRepository } from '../store/certificates-repository.ts';
import { DeliveriesRepository } from '../store/deliveries-repository.ts';
import { GenerationsRepository } from '../store/generations-repository.ts';
import { BatchesRepository } from '../store/batches-repository.ts';
import {
  connectMongo,
  DEFAULT_SERVER_SELECTION_TIMEOUT_MS,
  redactMongoUrl,
  type MongoConnection,
} from '../store/mongo.ts';
import { migrateSchema, SchemaError, type SchemaReport } from '../store/schema.ts';
import { RateLimitsRepository } from '../store/rate-limits-repository.ts';
import { StatsRepository } from '../store/stats-repository.ts';
import { TemplatesRepository } from '../store/templates-repository.ts';
import { WebhookEndpointsRepository } from '../store/webhook-endpoints-repository.ts';
import { WorkspacesRepository } from '../store/workspaces-repository.ts';
import { createIdentityRepositories, type IdentityRepositories } from '../identity/identity.ts';
import { DependencyWaiter } from './wait-for-dependency.ts';

export type { DocgenQueue } from '../queue/docgen-queue.ts';

export interface Repositories {
  workspaces: WorkspacesRepository;
  apiKeys: ApiKeysRepository;
  templates: TemplatesRepository;
  generations: GenerationsRepository;
  batches: BatchesRepository;
  rateLimits: RateLimitsRepository;
  webhookEndpoints: WebhookEndpointsRepository;
  deliveries: DeliveriesRepository;
  assets: AssetsRepository;
  certificates: CertificatesRepository;
  /** Workspace statistics: hourly counters (docs/architecture.md#workspace-statistics). */
  stats: StatsRepository;
  /** Users, memberships, sessions, invitations, audit events (src/identity). */
  identity: IdentityRepositories;
}

export interface Infrastructure {
  mongo: MongoConnection;
  repositories: Repositories;
  queue: DocgenQueue;
  objects: ObjectStore;
  close(): Promise<void>;
}

export interface InfrastructureContext {
  logger: Logger;
  metrics: Metrics;
  ops: OpsServer;
  /** Aborts the wait for MongoDB and NATS (shutdown during start-up). */
  signal?: AbortSignal | undefined;
}

/** A misconfiguration (e.g. a stream with the wrong retention) is not fixed by waiting. */
const isPermanent = (err: unknown) => isDomainError(err) && err.code === 'FAILED_PRECONDITION';

export async function connectInfrastructure(config: Config, ctx: InfrastructureContext): Promise<Infrastructure> {
  const { logger, ops } = ctx;
  const appName = `docgen-${config.roles.join('-')}`;

  const mongoTarget = redactMongoUrl(config.mongodb.url);
  const mongoWait = new DependencyWaiter('MongoDB', mongoTarget, () =>
    connectMongo({
      url: config.mongodb.url,
      database: config.mongodb.database,
      appName,
      serverSelectionTimeoutMs: config.mongodb.serverSelectionTimeoutMs,
      operationTimeoutMs: config.mongodb.operationTimeoutMs,
    }),
  );
  let mongo: MongoConnection | undefined;
  // The declared indexes (src/store/schema.ts). On MongoDB a refused index keeps the process
  // from serving: readiness names the index and the fix, and the step is retried (every 30 s at
  // most), so a fixed database is picked up without a restart.
  const schemaWait = new DependencyWaiter('the MongoDB indexes', mongoTarget, async () => {
    const report = await migrateSchema(mongo!.db, { appliedBy: appName });
    if (report.problems.length > 0) throw new SchemaError(report.problems);
    return report;
  });
  const logSchema = (report: SchemaReport) => {
    if (report.newlyApplied.length > 0) logger.info('schema steps applied', { steps: report.newlyApplied });
    if (report.warnings.length > 0)
      logger.warn('the embedded MongoDB stand-in lacks some index features; docgen does not depend on them', {
        gaps: report.warnings,
      });
  };
  const natsWait = new DependencyWaiter('NATS', config.nats.servers.join(', '), async () => {
    const queue = await connectNats({
      servers: config.nats.servers,
      streamPrefix: config.nats.streamPrefix,
      name: appName,
    });
    try {
      await queue.ensureStreams();
    } catch (err) {
      await queue.close().catch(() => {});
      throw err;
    }
    return queue;
  });

  let schemaReady = false;
  let nats: NatsQueue | undefined;
  const selectionMs = config.mongodb.serverSelectionTimeoutMs ?? DEFAULT_SERVER_SELECTION_TIMEOUT_MS;
  ops.addReadinessCheck('mongodb', async () => {
    if (!mongo) throw new Error(mongoWait.describe());
    if (!schemaReady) throw new Error(schemaWait.describe());
    // Answered from the driver's monitoring, without waiting for a server: during an election
    // requests wait for the new primary (up to the server selection time-out), readiness does not.
    if (!mongo.writableServerKnown()) {
      throw new Error(
        `no writable MongoDB server known right now (an election or an outage); operations wait up to ${selectionMs} ms for one`,
      );
    }
    await mongo.db.command({ ping: 1 });
  });
  ops.addReadinessCheck('nats', () => {
    if (!nats) throw new Error(natsWait.describe());
    if (!nats.isConnected()) throw new Error('not connected to NATS (reconnecting)');
  });

  // Both at once: start-up takes as long as the slower one, not the sum.
  const stopWaiting = new AbortController();
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, stopWaiting.signal]) : stopWaiting.signal;
  const waitOptions = { logger, signal, isPermanent };
  const waits = [
    mongoWait
      .connect(waitOptions)
      .then((c) => (mongo = c))
      .then(() => schemaWait.connect({ ...waitOptions, initialDelayMs: 5_000, maxDelayMs: 30_000 }))
      .then((report) => {
        logSchema(report);
        schemaReady = true;
      }),
    natsWait.connect(waitOptions).then((q) => (nats = q)),
  ];
  try {
    await Promise.all(waits);
  } catch (err) {
    stopWaiting.abort(err);
    await Promise.allSettled(waits);
    await nats?.close().catch(() => {});
    await mongo?.close().catch(() => {});
    throw err;
  }
  const connectedMongo = mongo!;
  const connectedNats = nats!;

  try {
    const objects = createObjectStore({
      endpoint: config.s3.endpoint,
      publicEndpoint: config.s3.publicEndpoint,
      accessKey: config.s3.accessKey,
      secretKey: config.s3.secretKey,
      bucket: config.s3.bucket,
      region: config.s3.region,
    });
    // The render role stores PDFs; the api role stores uploaded assets.
    if (config.roles.includes('render') || config.roles.includes('api')) await objects.ensureBucket();

    const db = connectedMongo.db;
    const repositories: Repositories = {
      workspaces: new WorkspacesRepository(db),
      apiKeys: new ApiKeysRepository(db),
      templates: new TemplatesRepository(db, config.secretKey),
      generations: new GenerationsRepository(db),
      batches: new BatchesRepository(db),
      rateLimits: new RateLimitsRepository(db),
      webhookEndpoints: new WebhookEndpointsRepository(db),
      deliveries: new DeliveriesRepository(db),
      assets: new AssetsRepository(db),
      certificates: new CertificatesRepository(db),
      stats: new StatsRepository(db),
      identity: createIdentityRepositories(db),
    };
    const queue = createDocgenQueue(connectedNats);

    // Ready when the store answers for the bucket with these credentials: the probe key need
    // not exist (a missing key is `false`, which a readiness check would count as a failure).
    if (config.roles.includes('render')) {
      ops.addReadinessCheck('object-storage', async () => {
        await objects.exists('.readiness-probe');
      });
    }

    return {
      mongo: connectedMongo,
      repositories,
      queue,
      objects,
      async close() {
        await connectedNats.close().catch(() => {});
        await connectedMongo.close().catch(() => {});
      },
    };
  } catch (err) {
    await connectedNats.close().catch(() => {});
    await connectedMongo.close().catch(() => {});
    throw err;
  }
}
