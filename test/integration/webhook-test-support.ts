// Shared by the webhook delivery tests: configuration for a webhooks process against the
// test's dependencies, workspaces and endpoints created through the admin code, final
// events as the render pipeline publishes them, and a receiver-side verifier written with
// node:crypto only (deliberately not docgen's signing code: it checks docgen from outside).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ObjectId } from 'mongodb';
import { WebhookEndpointAdmin } from '../../src/admin/webhook-endpoint-admin.ts';
import { WorkspaceAdmin } from '../../src/admin/workspace-admin.ts';
import { connectInfrastructure, type Infrastructure, type Repositories } from '../../src/app/infrastructure.ts';
import { loadConfig, type Config } from '../../src/config/config.ts';
import { silentLogger } from '../../src/ops/logger.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { createOpsServer } from '../../src/ops/ops-server.ts';
import type { EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { deterministicObjectId, formatId } from '../../src/domain/ids.ts';
import type { FinalEvent } from '../../src/queue/messages.ts';
import type { DeliveryDoc } from '../../src/store/documents.ts';
import { dependencyEnv, type TestMongo } from '../harness/dependencies.ts';
import { pollUntil } from '../harness/poll-until.ts';
import type { ReceivedRequest } from '../harness/http-receiver.ts';
import { LOOPBACK_LISTENERS, testPageTokens, testSecretKey } from '../harness/test-config.ts';

export const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/**
 * DOCGEN_* for a webhooks process on the test's NATS and MongoDB (own stream prefix and
 * database per call, so several apps in one file never share consumers). S3 is configured
 * but never contacted: the webhooks role does not use it.
 */
export function webhooksEnv(
  deps: { nats: EmbeddedNats; mongo: TestMongo },
  overrides: Record<string, string> = {},
): Record<string, string> {
  const env = dependencyEnv(deps);
  return {
    ...env,
    DOCGEN_MONGODB_DATABASE: `${deps.mongo.database}_${randomBytes(3).toString('hex')}`,
    DOCGEN_ROLES: 'webhooks',
    DOCGEN_SECRET_KEY: testSecretKey().toString('hex'),
    DOCGEN_S3_ENDPOINT: 'http://127.0.0.1:9',
    DOCGEN_S3_ACCESS_KEY: 'unused',
    DOCGEN_S3_SECRET_KEY: 'unused-by-the-webhooks-role',
    ...LOOPBACK_LISTENERS,
    DOCGEN_LOG_LEVEL: 'warn',
    DOCGEN_SHUTDOWN_GRACE_MS: '5000',
    ...overrides,
  };
}

/**
 * The test's own connections to what a webhooks child process uses (same database, same
 * streams): repositories to create rows and read deliveries, the queue to publish events.
 * No role runs here.
 */
export async function connectAsProducer(
  env: Record<string, string>,
): Promise<{ config: Config; infrastructure: Infrastructure }> {
  const config = loadConfig(env);
  const metrics = createMetrics({ defaultMetrics: false });
  const ops = createOpsServer({ address: config.opsAddress, metrics, logger: silentLogger });
  const infrastructure = await connectInfrastructure(config, { logger: silentLogger, metrics, ops });
  return { config, infrastructure };
}

export interface TestEndpoint {
  id: string;
  objectId: ObjectId;
  secret: string;
  url: string;
}

export async function createWorkspace(
  repositories: Repositories,
  name = 'webhooks test',
): Promise<{ id: string; objectId: ObjectId }> {
  const view = await new WorkspaceAdmin({ workspaces: repositories.workspaces, pageTokens: testPageTokens() }).create({
    name,
  });
  return { id: view.id, objectId: new ObjectId(view.id.slice('ws_'.length)) };
}

/** Creates an endpoint through the admin code (URL checks, sealed secret), as the portal would. */
export async function createEndpoint(
  repositories: Repositories,
  config: { secretKey: Buffer; allowInsecureUrls: boolean },
  workspaceId: string,
  url: string,
  events: string[],
): Promise<TestEndpoint> {
  const admin = new WebhookEndpointAdmin({
    workspaces: repositories.workspaces,
    endpoints: repositories.webhookEndpoints,
    secretKey: config.secretKey,
    allowInsecureUrls: config.allowInsecureUrls,
    pageTokens: testPageTokens(),
  });
  const { endpoint, secret } = await admin.create({ workspaceId, url, events });
  return { id: endpoint.id, objectId: new ObjectId(endpoint.id.slice('whe_'.length)), secret, url };
}

/** A final event exactly as the render pipeline builds it (finalEventFor). */
export function finalEvent(workspaceId: string, event: FinalEvent['event'], error?: string): FinalEvent {
  const generation = new ObjectId();
  const e: FinalEvent = {
    eventId: formatId('event', deterministicObjectId('event', generation.toHexString())),
    event,
    generationId: formatId('generation', generation),
    workspaceId,
    timestamp: Math.floor(Date.now() / 1000),
  };
  if (event === 'generation.failed') e.error = error ?? 'Rendering failed';
  return e;
}

// ---------------------------------------------------------------------------------------------
// The receiver's side, node:crypto only.

/** `sha256=<hex HMAC-SHA256 of the raw body>`, keyed with the secret string, compared timing-safe. */
export function verifyServiceSignature(rawBody: Buffer, header: string | undefined, secret: string): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from('sha256=' + createHmac('sha256', secret).update(rawBody).digest('hex'), 'utf8');
  const received = Buffer.from(header, 'utf8');
  return received.length === expected.length && timingSafeEqual(received, expected);
}

/** Standard Webhooks: `v1,<base64 HMAC of id.timestamp.body>` keyed with the base64-decoded secret. */
export function verifyStandardWebhook(
  rawBody: Buffer,
  headers: { id?: string; timestamp?: string; signature?: string },
  secret: string,
): boolean {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !/^\d+$/.test(timestamp) || !signature) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = Buffer.from(
    createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest('base64'),
  );
  let ok = false;
  for (const entry of signature.split(' ')) {
    const [version, sig] = entry.split(',');
    const received = Buffer.from(sig ?? '');
    if (version === 'v1' && received.length === expected.length && timingSafeEqual(received, expected)) ok = true;
  }
  return ok;
}

/** Both signatures of a received request verify with the endpoint's secret. */
export function verifies(request: ReceivedRequest, secret: string): boolean {
  return (
    verifyServiceSignature(request.body, request.header('x-service-signature'), secret) &&
    verifyStandardWebhook(
      request.body,
      {
        id: request.header('webhook-id'),
        timestamp: request.header('webhook-timestamp'),
        signature: request.header('webhook-signature'),
      },
      secret,
    )
  );
}

// ---------------------------------------------------------------------------------------------

/** Differences between consecutive times (ms). */
export function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => t - times[i]!);
}

/** Polls the delivery row until `accept` holds. */
export function waitForDelivery(
  repositories: Repositories,
  id: ObjectId,
  accept: (doc: DeliveryDoc) => boolean,
  timeoutMs = 10_000,
  description = 'the delivery to reach the expected state',
): Promise<DeliveryDoc> {
  return pollUntil(
    async () => repositories.deliveries.get(id),
    (doc): boolean => doc !== null && accept(doc),
    { timeoutMs, intervalMs: 50, description },
  ) as Promise<DeliveryDoc>;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
