// The domain services in this process, on the real repositories over the embedded MongoDB
// stand-in (or DOCGEN_TEST_MONGODB_URL), with in-memory fakes only at the edges where docgen
// talks to NATS and S3. The fast middle of the test pyramid: no Chromium, NATS or S3.
import { randomBytes } from 'node:crypto';
import { MongoClient, type Db, type ObjectId } from 'mongodb';
import { ApiKeyAdmin } from '../../src/admin/api-key-admin.ts';
import { PublicApi } from '../../src/api/public-api.ts';
import { BatchService } from '../../src/batches/batch-service.ts';
import { BatchesRepository } from '../../src/store/batches-repository.ts';
import { ApiKeyAuthenticator, type Principal } from '../../src/auth/authentication.ts';
import { formatId, parseId } from '../../src/domain/ids.ts';
import { type TemplateVersionContent } from '../../src/domain/template.ts';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import {
  GenerationService,
  type OutputUrlSigner,
  type RenderJobPublisher,
} from '../../src/generations/generation-service.ts';
import { ApiKeysRepository } from '../../src/store/api-keys-repository.ts';
import { ensureIndexes } from '../../src/store/documents.ts';
import { PageTokens } from '../../src/store/pagination.ts';
import { GenerationsRepository } from '../../src/store/generations-repository.ts';
import { RateLimitsRepository } from '../../src/store/rate-limits-repository.ts';
import { TemplatesRepository } from '../../src/store/templates-repository.ts';
import { WorkspacesRepository } from '../../src/store/workspaces-repository.ts';
import { startMongo, type TestMongo } from './dependencies.ts';
import { testSecretKey } from './test-config.ts';
import { TEMPLATES_TEST_KEY } from './test-config.ts';

/** Render jobs as the queue would receive them; `failing` makes the next publishes throw. */
export class MemoryJobQueue implements RenderJobPublisher {
  readonly published: string[] = [];
  failing = false;
  async publishRenderJob(generationId: string): Promise<void> {
    if (this.failing) throw new Error('broker unavailable');
    this.published.push(generationId);
  }
}

/** A URL signer that says what it signed and for how long. */
export const memoryUrlSigner: OutputUrlSigner = {
  async presignGet(key, expirySeconds) {
    return `https://objects.test/${key}?expires=${expirySeconds}`;
  },
};

export interface InProcessStack {
  mongo: TestMongo;
  client: MongoClient;
  db: Db;
  repositories: {
    generations: GenerationsRepository;
    templates: TemplatesRepository;
    workspaces: WorkspacesRepository;
    apiKeys: ApiKeysRepository;
    rateLimits: RateLimitsRepository;
    batches: BatchesRepository;
  };
  jobs: MemoryJobQueue;
  publishErrors: Array<{ generationId: string; err: unknown }>;
  generations: GenerationService;
  batches: BatchService;
  api: PublicApi;
  /** A new workspace's id. */
  workspace(name?: string): Promise<ObjectId>;
  /** A principal of the workspace, as authentication would produce it. */
  principal(workspaceId: ObjectId, scopes?: string[]): Principal;
  /** A new API key of the workspace (made by the admin plane); returns the secret and its record id. */
  apiKey(
    workspaceId: ObjectId,
    scopes: string[],
    rate?: { perSecond: number; burst: number },
  ): Promise<{ secret: string; id: ObjectId }>;
  /** A template with one version, published unless told otherwise; returns its public id. */
  template(
    workspaceId: ObjectId,
    options?: { name?: string; publish?: boolean; content?: Partial<TemplateVersionContent> },
  ): Promise<string>;
  close(): Promise<void>;
}

/** What a rejected promise was rejected with, checked to be of the expected class. */
export async function rejection<E extends Error>(
  promise: Promise<unknown>,
  type: new (...args: never[]) => E,
): Promise<E> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof type)) throw new Error(`expected a ${type.name}, got ${String(err)}`);
  return err;
}

export function simpleContent(patch: Partial<TemplateVersionContent> = {}): TemplateVersionContent {
  return {
    body: '<p>Hello {{ name }}</p>',
    css: '',
    partials: {},
    variables: [{ name: 'name', required: false, description: '' }],
    pdfOptions: DEFAULT_PDF_OPTIONS,
    ...patch,
  };
}

export async function startInProcessStack(): Promise<InProcessStack> {
  const mongo = await startMongo();
  const client = new MongoClient(mongo.url);
  await client.connect();
  const db = client.db(mongo.database);
  await ensureIndexes(db);
  const repositories = {
    generations: new GenerationsRepository(db),
    templates: new TemplatesRepository(db, TEMPLATES_TEST_KEY),
    workspaces: new WorkspacesRepository(db),
    apiKeys: new ApiKeysRepository(db),
    rateLimits: new RateLimitsRepository(db),
    batches: new BatchesRepository(db),
  };
  const jobs = new MemoryJobQueue();
  const pageTokens = new PageTokens(testSecretKey());
  const publishErrors: InProcessStack['publishErrors'] = [];
  const generations = new GenerationService({
    generations: repositories.generations,
    templates: repositories.templates,
    jobs,
    urls: memoryUrlSigner,
    pageTokens,
    onPublishError: (generationId, err) => publishErrors.push({ generationId, err }),
  });
  const authenticator = new ApiKeyAuthenticator(repositories.apiKeys, {
    cacheMs: 0,
    defaultRateLimit: { perSecond: 20, burst: 40 },
  });
  const batches = new BatchService({
    batches: repositories.batches,
    generations: repositories.generations,
    generationService: generations,
    jobs,
    urls: memoryUrlSigner,
    onPublishError: (generationId, err) => publishErrors.push({ generationId, err }),
  });
  const api = new PublicApi({ authenticator, rateLimits: repositories.rateLimits, generations, batches });
  const apiKeyAdmin = new ApiKeyAdmin({
    workspaces: repositories.workspaces,
    apiKeys: repositories.apiKeys,
    pageTokens,
  });

  return {
    mongo,
    client,
    db,
    repositories,
    jobs,
    publishErrors,
    generations,
    batches,
    api,
    async workspace(name = `ws-${randomBytes(3).toString('hex')}`) {
      return (await repositories.workspaces.create(name))._id;
    },
    async apiKey(workspaceId, scopes, rate) {
      const { apiKey, secret } = await apiKeyAdmin.create(
        {
          workspaceId: formatId('workspace', workspaceId),
          name: 'test key',
          scopes,
          rateLimitPerSecond: rate?.perSecond,
          rateLimitBurst: rate?.burst,
        },
        // As the operator would: tests give keys rates of their own.
        { operator: true },
      );
      return { secret, id: parseId('apiKey', apiKey.id)! };
    },
    principal(workspaceId, scopes = ['generations:trigger', 'generations:read']) {
      return { keyId: workspaceId, workspaceId, scopes, test: false, rateLimit: { perSecond: 20, burst: 40 } };
    },
    async template(workspaceId, options = {}) {
      const { template } = await repositories.templates.create(
        workspaceId,
        options.name ?? 'Letter',
        simpleContent(options.content),
      );
      if (options.publish !== false) await repositories.templates.publish(template._id, 1);
      return formatId('template', template._id);
    },
    async close() {
      await generations.settle();
      await client.close();
      await mongo.stop();
    },
  };
}
