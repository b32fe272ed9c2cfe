// Connections every role shares: MongoDB (rows), NATS JetStream (jobs and events) and the
// object store (PDFs), plus the repositories over MongoDB. Connected once per process; each
// registers a readiness check so /readyz reports a dependency that went away.
import type { Config } from '../config/config.ts';
import type { Logger } from '../ops/logger.ts';
import type { Metrics } from '../ops/metrics.ts';
import type { OpsServer } from '../ops/ops-server.ts';
import { connectNats, type NatsQueue } from '../queue/jetstream.ts';
import type { FinalEvent } from '../render/render-pipeline.ts';
import { createObjectStore, type ObjectStore } from '../storage/object-store.ts';
import { ApiKeysRepository } from '../store/api-keys-repository.ts';
import { DeliveriesRepository } from '../store/deliveries-repository.ts';
import { ensureIndexes } from '../store/documents.ts';
import { GenerationsRepository } from '../store/generations-repository.ts';
import { connectMongo, type MongoConnection } from '../store/mongo.ts';
import { RateLimitsRepository } from '../store/rate-limits-repository.ts';
import { TemplatesRepository } from '../store/templates-repository.ts';
import { WebhookEndpointsRepository } from '../store/webhook-endpoints-repository.ts';
import { WorkspacesRepository } from '../store/workspaces-repository.ts';
import { createIdentityRepositories, type IdentityRepositories } from '../identity/identity.ts';

export interface Repositories {
  workspaces: WorkspacesRepository;
  apiKeys: ApiKeysRepository;
  templates: TemplatesRepository;
  generations: GenerationsRepository;
  rateLimits: RateLimitsRepository;
  webhookEndpoints: WebhookEndpointsRepository;
  deliveries: DeliveriesRepository;
  /** Users, memberships, sessions, invitations, audit events (src/identity). */
  identity: IdentityRepositories;
}

/** docgen's own messages on JetStream, on top of the generic queue. */
export interface DocgenQueue {
  nats: NatsQueue;
  publishRenderJob(generationId: string, msgId: string): Promise<void>;
  publishFinalEvent(event: FinalEvent): Promise<void>;
  publishDeliveryJob(deliveryId: string, msgId: string): Promise<void>;
}

export interface Infrastructure {
  mongo: MongoConnection;
  repositories: Repositories;
  queue: DocgenQueue;
  objects: ObjectStore;
  close(): Promise<void>;
}

export async function connectInfrastructure(config: Config, ctx: { logger: Logger; metrics: Metrics; ops: OpsServer }): Promise<Infrastructure> {
  const { logger, ops } = ctx;
  const mongo = await connectMongo({ url: config.mongodb.url, database: config.mongodb.database, appName: `docgen-${config.roles.join('-')}` });
  let nats: NatsQueue | undefined;
  try {
    const refused = await ensureIndexes(mongo.db);
    if (refused.length > 0) logger.warn('the database refused some indexes (expected only on the embedded stand-in)', { refused });

    nats = await connectNats({ servers: config.nats.servers, streamPrefix: config.nats.streamPrefix, name: `docgen-${config.roles.join('-')}` });
    await nats.ensureStreams();

    const objects = createObjectStore({
      endpoint: config.s3.endpoint,
      publicEndpoint: config.s3.publicEndpoint,
      accessKey: config.s3.accessKey,
      secretKey: config.s3.secretKey,
      bucket: config.s3.bucket,
      region: config.s3.region,
    });
    if (config.roles.includes('render')) await objects.ensureBucket();

    const db = mongo.db;
    const repositories: Repositories = {
      workspaces: new WorkspacesRepository(db),
      apiKeys: new ApiKeysRepository(db),
      templates: new TemplatesRepository(db),
      generations: new GenerationsRepository(db),
      rateLimits: new RateLimitsRepository(db),
      webhookEndpoints: new WebhookEndpointsRepository(db),
      deliveries: new DeliveriesRepository(db),
      identity: createIdentityRepositories(db),
    };

    const queueNats = nats;
    const names = queueNats.names;
    const queue: DocgenQueue = {
      nats: queueNats,
      async publishRenderJob(generationId, msgId) {
        await queueNats.publish(names.subjects.renderJobs, { generationId }, msgId);
      },
      async publishFinalEvent(event) {
        // One event per generation: its id is derived from the generation, and so is the msgID.
        await queueNats.publish(`${names.subjects.eventsWildcard.slice(0, -1)}${event.event}`, event, event.eventId);
      },
      async publishDeliveryJob(deliveryId, msgId) {
        await queueNats.publish(names.subjects.deliveryJobs, { deliveryId }, msgId);
      },
    };

    ops.addReadinessCheck('mongodb', () => db.command({ ping: 1 }));
    ops.addReadinessCheck('nats', () => {
      if (!queueNats.isConnected()) throw new Error('not connected to NATS (reconnecting)');
    });
    // Ready when the store answers for the bucket with these credentials: the probe key need
    // not exist (a missing key is `false`, which a readiness check would count as a failure).
    if (config.roles.includes('render')) {
      ops.addReadinessCheck('object-storage', async () => {
        await objects.exists('.readiness-probe');
      });
    }

    return {
      mongo,
      repositories,
      queue,
      objects,
      async close() {
        await queueNats.close().catch(() => {});
        await mongo.close().catch(() => {});
      },
    };
  } catch (err) {
    await nats?.close().catch(() => {});
    await mongo.close().catch(() => {});
    throw err;
  }
}
