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
import { DeliveriesRepository } from '../store/deliveries-repository.ts';
import { ensureIndexes } from '../store/documents.ts';
import { GenerationsRepository } from '../store/generations-repository.ts';
import { connectMongo, redactMongoUrl, type MongoConnection } from '../store/mongo.ts';
import { RateLimitsRepository } from '../store/rate-limits-repository.ts';
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
  rateLimits: RateLimitsRepository;
  webhookEndpoints: WebhookEndpointsRepository;
  deliveries: DeliveriesRepository;
  assets: AssetsRepository;
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

  const mongoWait = new DependencyWaiter('MongoDB', redactMongoUrl(config.mongodb.url), async () => {
    const connection = await connectMongo({ url: config.mongodb.url, database: config.mongodb.database, appName });
    try {
      const refused = await ensureIndexes(connection.db);
      if (refused.length > 0)
        logger.warn('the database refused some indexes (expected only on the embedded stand-in)', { refused });
    } catch (err) {
      await connection.close().catch(() => {});
      throw err;
    }
    return connection;
  });
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

  let mongo: MongoConnection | undefined;
  let nats: NatsQueue | undefined;
  ops.addReadinessCheck('mongodb', async () => {
    if (!mongo) throw new Error(mongoWait.describe());
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
    mongoWait.connect(waitOptions).then((c) => (mongo = c)),
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
      templates: new TemplatesRepository(db),
      generations: new GenerationsRepository(db),
      rateLimits: new RateLimitsRepository(db),
      webhookEndpoints: new WebhookEndpointsRepository(db),
      deliveries: new DeliveriesRepository(db),
      assets: new AssetsRepository(db),
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
