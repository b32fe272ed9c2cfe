// Every list and sweeper query docgen sends, captured as sent: seeds enough rows that paging
// goes deep (page 10 of 10 rows), runs the real repositories and services, and records the
// `find` command the driver sent for the last page (command monitoring, the driver's public
// API). test/integration/mongodb-only.test.ts explains each on a real MongoDB.
import { ObjectId, type Db, type Document, type MongoClient } from 'mongodb';
import { formatId, timeOrderedObjectId } from '../../src/domain/ids.ts';
import { GenerationService } from '../../src/generations/generation-service.ts';
import { ApiKeysRepository } from '../../src/store/api-keys-repository.ts';
import { AssetsRepository } from '../../src/store/assets-repository.ts';
import { AuditEventsRepository } from '../../src/store/audit-events-repository.ts';
import { DeliveriesRepository } from '../../src/store/deliveries-repository.ts';
import { BatchesRepository } from '../../src/store/batches-repository.ts';
import { COLLECTIONS, type BatchDoc, type GenerationDoc, type GenerationStatus } from '../../src/store/documents.ts';
import { GenerationsRepository } from '../../src/store/generations-repository.ts';
import { MembershipsRepository } from '../../src/store/memberships-repository.ts';
import { PageTokens, type Page, type PageRequest } from '../../src/store/pagination.ts';
import { TemplatesRepository } from '../../src/store/templates-repository.ts';
import { UsersRepository } from '../../src/store/users-repository.ts';
import { WebhookEndpointsRepository } from '../../src/store/webhook-endpoints-repository.ts';
import { WorkspacesRepository } from '../../src/store/workspaces-repository.ts';
import { TEMPLATES_TEST_KEY } from './test-config.ts';

export interface CapturedQuery {
  /** What the query is for, e.g. `ListGenerations (status), page 10`. */
  what: string;
  /** The `find` command as the driver sent it (without session and cluster fields). */
  command: Document;
}

/** The audit rows' actors and actions, in turn (the filters each keep a share of them). */
const AUDIT_ACTORS = ['usr_6b1c0a2fb829bbb04986517f', 'operator', 'usr_6b1c0a2fb829bbb049865180'];
const AUDIT_ACTIONS = ['templates.publish', 'apiKeys.create', 'members.updateRole', 'templates.addVersion'];

/** Rows per list: page 10 of 10 rows lies 90 rows deep. */
const ROWS = 150;
const PAGE_SIZE = 10;
const DEEP_PAGE = 10;

const FIND_FIELDS = ['find', 'filter', 'sort', 'projection', 'limit', 'skip', 'hint'];

/**
 * Seeds a database and runs every list and sweeper query against it through `client` (which
 * must have been created with `monitorCommands: true`), returning the last `find` of each.
 */
export async function captureListQueries(client: MongoClient, db: Db): Promise<CapturedQuery[]> {
  const sent: Document[] = [];
  const onStarted = (event: { commandName: string; command: Document; databaseName: string }) => {
    if (event.commandName === 'find' && event.databaseName === db.databaseName) sent.push(event.command);
  };
  client.on('commandStarted', onStarted);
  const captured: CapturedQuery[] = [];
  const capture = async (what: string, run: () => Promise<unknown>) => {
    sent.length = 0;
    await run();
    const last = sent.at(-1);
    if (!last) throw new Error(`${what}: no find command was sent`);
    captured.push({
      what,
      command: Object.fromEntries(FIND_FIELDS.filter((f) => f in last).map((f) => [f, last[f]])),
    });
  };
  const pageTokens = new PageTokens(Buffer.alloc(32, 7));
  /** A request for the page after `pageToken` of a list (tokens are bound to the list's name). */
  const pageOf = (list: string, pageToken: string | undefined): PageRequest =>
    pageTokens.request({ pageSize: PAGE_SIZE, pageToken }, { list, filters: {} });
  /** Pages a list to its `pages`-th page (DEEP_PAGE by default). */
  const deep = async <T>(list: (page: PageRequest) => Promise<Page<T>>, pages = DEEP_PAGE) => {
    let token: string | undefined;
    for (let page = 1; page <= pages; page++) {
      const result = await list(pageOf('capture', token));
      if (page < pages && !result.nextPageToken) throw new Error(`only ${page} pages`);
      token = result.nextPageToken || undefined;
    }
  };

  try {
    const workspace = new ObjectId();
    const other = new ObjectId();
    const template = new ObjectId();
    const endpoint = new ObjectId();
    const generation = new ObjectId();
    const now = Date.now();
    const at = (i: number) => new Date(now - (ROWS - i) * 60_000);
    const both = (make: (ws: ObjectId, i: number) => Document) =>
      [workspace, other].flatMap((ws) => Array.from({ length: ROWS }, (_, i) => make(ws, i)));

    // ---- rows -------------------------------------------------------------------------------
    const generations = new GenerationsRepository(db);
    const statuses: GenerationStatus[] = ['COMPLETED', 'FAILED', 'PENDING', 'PROCESSING'];
    await db.collection<GenerationDoc>(COLLECTIONS.generations).insertMany(
      both((ws, i) => {
        const doc = generations.newDoc(
          {
            workspaceId: ws,
            templateId: i % 2 === 0 ? template : new ObjectId(),
            templateRef: 'tpl',
            templateName: 'T',
            data: {},
            // Every fifth generation was made with a test key (docs/interface.md#test-mode).
            test: i % 5 === 0,
          },
          at(i),
        );
        doc.status = statuses[i % 4]!;
        doc.jobPublishedAt = i % 8 === 2 ? null : at(i);
        doc.leaseUntil = doc.status === 'PROCESSING' ? at(i) : null;
        doc.eventPublished = doc.status === 'COMPLETED' || doc.status === 'FAILED' ? i % 10 !== 0 : null;
        return doc;
      }) as GenerationDoc[],
    );
    // Batches: mostly finished (retention), a few being created (the creation sweeper).
    const batches = new BatchesRepository(db);
    await db.collection<BatchDoc>(COLLECTIONS.batches).insertMany(
      both((ws, i) => {
        const doc = batches.newDoc(
          { _id: new ObjectId(), workspaceId: ws, total: 3, merge: false, itemEvents: true, test: i % 5 === 0 },
          at(i),
        );
        doc.itemsStored = i % 30 !== 7;
        doc.status = i % 10 === 3 ? 'PROCESSING' : doc.itemsStored ? 'COMPLETED' : 'PENDING';
        doc.eventPublished = doc.status === 'COMPLETED' ? true : null;
        return doc;
      }) as BatchDoc[],
    );
    await db
      .collection(COLLECTIONS.templates)
      .insertMany(both((ws, i) => ({ _id: new ObjectId(), workspaceId: ws, name: `t${i}`, createdAt: at(i) })));
    await db.collection(COLLECTIONS.templateVersions).insertMany(
      Array.from({ length: ROWS }, (_, i) => ({
        _id: new ObjectId(),
        templateId: template,
        version: i + 1,
        content: {},
        createdAt: at(i),
      })),
    );
    await db
      .collection(COLLECTIONS.apiKeys)
      .insertMany(
        both((ws) => ({ _id: new ObjectId(), workspaceId: ws, hash: new ObjectId().toHexString(), revokedAt: null })),
      );
    await db.collection(COLLECTIONS.webhookEndpoints).insertMany(
      both((ws, i) => ({
        _id: new ObjectId(),
        workspaceId: ws,
        events: ['generation.completed'],
        deletedAt: null,
        // Half opted in to test events (docs/interface.md#test-mode).
        testEvents: i % 2 === 0,
      })),
    );
    await db.collection(COLLECTIONS.deliveries).insertMany(
      both((ws, i) => ({
        _id: new ObjectId(),
        workspaceId: ws,
        endpointId: ws.equals(workspace) ? endpoint : new ObjectId(),
        generationId: ws.equals(workspace) ? generation : new ObjectId(),
        status: i % 2 === 0 ? 'PENDING' : 'SUCCEEDED',
        nextAttemptAt: i % 2 === 0 ? at(i) : null,
        // The admin list pages by creation time (src/store/pagination.ts).
        createdAt: at(i),
        round: 1,
        roundAttempts: 1,
        attempts: [],
      })),
    );
    await db
      .collection(COLLECTIONS.assets)
      .insertMany(both((ws, i) => ({ _id: new ObjectId(), workspaceId: ws, name: `a${i}.png`, sizeBytes: 1 })));
    const userIds = Array.from({ length: ROWS * 2 }, () => new ObjectId());
    await db
      .collection(COLLECTIONS.users)
      .insertMany(userIds.map((_id, i) => ({ _id, email: `u${i}@example.com`, createdAt: at(i % ROWS) })));
    await db.collection(COLLECTIONS.memberships).insertMany(
      userIds.map((userId, i) => ({
        _id: new ObjectId(),
        userId,
        workspaceId: i % 2 === 0 ? workspace : other,
        role: 'editor',
        createdAt: at(i % ROWS),
      })),
    );
    await db.collection(COLLECTIONS.auditEvents).insertMany(
      both((ws, i) => ({
        // As the audit log records them: the _id starts with the second the event occurred.
        _id: timeOrderedObjectId(Math.floor(at(i).getTime() / 1000), ws.toHexString(), String(i)),
        workspaceId: ws,
        actor: AUDIT_ACTORS[i % AUDIT_ACTORS.length]!,
        action: AUDIT_ACTIONS[i % AUDIT_ACTIONS.length]!,
        targetId: '',
        detail: '',
        occurredAt: at(i),
      })),
    );
    await db.collection(COLLECTIONS.workspaces).insertMany(
      Array.from({ length: ROWS * 2 }, (_, i) => ({
        _id: new ObjectId(),
        name: `w${i}`,
        createdAt: at(i % ROWS),
        ...(i % 2 === 0 ? { retentionSeconds: 3600 } : {}),
      })),
    );

    // ---- the public list -------------------------------------------------------------------
    const service = new GenerationService({
      generations,
      templates: new TemplatesRepository(db, TEMPLATES_TEST_KEY),
      jobs: { publishRenderJob: async () => {} },
      urls: { presignGet: async (key) => key },
      pageTokens,
    });
    const principal = { workspaceId: workspace };
    // An API key's lists see one mode: live (120 rows a workspace) or test (30).
    await capture(`ListGenerations (live key), page ${DEEP_PAGE}`, () =>
      deep((p) => generations.list({ workspaceId: workspace, test: false }, p)),
    );
    await capture('ListGenerations (test key), page 3', () =>
      deep((p) => generations.list({ workspaceId: workspace, test: true }, p), 3),
    );
    // [label, filter, the page to go to (the filter's matches allow)]
    const filters: Array<[string, Record<string, unknown>, number]> = [
      ['', {}, DEEP_PAGE],
      [' (status)', { status: 'COMPLETED' }, 3],
      [' (templateId)', { templateId: formatId('template', template) }, 6],
      [' (createdAfter, createdBefore)', { createdAfter: at(0), createdBefore: new Date(now) }, DEEP_PAGE],
    ];
    for (const [label, filter, pages] of filters) {
      await capture(`ListGenerations${label}, page ${pages}`, async () => {
        let pageToken: string | undefined;
        for (let page = 1; page <= pages; page++) {
          const result = await service.list(principal, { ...filter, pageSize: PAGE_SIZE, pageToken });
          pageToken = result.nextPageToken ?? undefined;
          if (page < pages && !pageToken) throw new Error(`ListGenerations${label}: only ${page} pages`);
        }
      });
    }

    // ---- admin lists (keyset over _id) ------------------------------------------------------
    const templates = new TemplatesRepository(db, TEMPLATES_TEST_KEY);
    await capture(`ListTemplates, page ${DEEP_PAGE}`, () => deep((p) => templates.list(workspace, p)));
    await capture('ListTemplateVersions', () => templates.listVersions(template));
    const keys = new ApiKeysRepository(db);
    await capture(`ListApiKeys, page ${DEEP_PAGE}`, () => deep((p) => keys.list(workspace, p)));
    const endpoints = new WebhookEndpointsRepository(db);
    await capture(`ListWebhookEndpoints, page ${DEEP_PAGE}`, () => deep((p) => endpoints.list(workspace, p)));
    await capture('webhook subscribers of an event', () => endpoints.subscribers(workspace, 'generation.completed'));
    await capture("webhook subscribers of a test generation's event", () =>
      endpoints.subscribers(workspace, 'generation.completed', { test: true }),
    );
    const deliveries = new DeliveriesRepository(db);
    await capture(`ListDeliveries (workspace), page ${DEEP_PAGE}`, () =>
      deep((p) => deliveries.list({ workspaceId: workspace }, p)),
    );
    await capture(`ListDeliveries (workspace, status), page ${DEEP_PAGE / 2}`, () =>
      deep((p) => deliveries.list({ workspaceId: workspace, status: 'PENDING' }, p), DEEP_PAGE / 2),
    );
    await capture(`ListDeliveries (generation), page ${DEEP_PAGE}`, () =>
      deep((p) => deliveries.list({ generationId: generation }, p)),
    );
    await capture(`ListDeliveries (endpoint), page ${DEEP_PAGE}`, () =>
      deep((p) => deliveries.list({ endpointId: endpoint }, p)),
    );
    const assets = new AssetsRepository(db);
    await capture('ListAssets', () => assets.list(workspace, pageOf('capture', undefined)));
    const users = new UsersRepository(db);
    await capture(`ListUsers, page ${DEEP_PAGE}`, () => deep((p) => users.list(undefined, p)));
    const memberships = new MembershipsRepository(db);
    const memberIds = (await memberships.listByWorkspace(workspace)).map((m) => m.userId);
    await capture(`ListUsers (workspace), page ${DEEP_PAGE / 2}`, () =>
      deep((p) => users.list(memberIds, p), DEEP_PAGE / 2),
    );
    await capture('ListMembers', () => memberships.page(workspace, pageOf('capture', undefined)));
    await capture("a user's memberships", () => memberships.listByUser(userIds[0]!));
    const audit = new AuditEventsRepository(db);
    await capture(`ListAuditEvents (workspace), page ${DEEP_PAGE}`, () => deep((p) => audit.list(workspace, p)));
    await capture(`ListAuditEvents (all), page ${DEEP_PAGE}`, () => deep((p) => audit.list(undefined, p)));
    // The audit log's filters (schema step 8): a third of the rows each, 4 pages deep.
    const person = AUDIT_ACTORS[0]!;
    const publish = [AUDIT_ACTIONS[0]!, 'TemplateService.PublishTemplateVersion'];
    const window = { occurredAfter: at(20), occurredBefore: at(120) };
    for (const [name, ws] of [
      ['workspace', workspace],
      ['all', undefined],
    ] as const) {
      await capture(`ListAuditEvents (${name}, person), page 4`, () =>
        deep((p) => audit.list(ws, p, { actor: person }), 4),
      );
      await capture(`ListAuditEvents (${name}, action), page 4`, () =>
        deep((p) => audit.list(ws, p, { actions: publish }), 4),
      );
      await capture(`ListAuditEvents (${name}, person and action), page 2`, () =>
        deep((p) => audit.list(ws, p, { actor: person, actions: publish }), 2),
      );
      await capture(`ListAuditEvents (${name}, time), page 4`, () => deep((p) => audit.list(ws, p, window), 4));
      await capture(`ListAuditEvents (${name}, person and time), page 2`, () =>
        deep((p) => audit.list(ws, p, { actor: person, ...window }), 2),
      );
    }
    const workspaces = new WorkspacesRepository(db);
    await capture(`ListWorkspaces, page ${DEEP_PAGE}`, () => deep((p) => workspaces.list(p)));

    // ---- sweepers ---------------------------------------------------------------------------
    await capture('outbox sweeper: stranded jobs', () => generations.findStranded(new Date(now), 5_000, 60_000, 200));
    await capture('outbox sweeper: unpublished events', () => generations.findUnpublishedEvents(new Date(now), 200));
    await capture('retention sweeper: workspaces with a retention', () => workspaces.withRetention(200));
    await capture('retention sweeper: expired generations', () =>
      generations.findExpired(workspace, new Date(now - 30 * 60_000), 200),
    );
    await capture('retention sweeper: expired test generations', () =>
      generations.findExpiredTests(new Date(now - 30 * 60_000), 200),
    );
    await capture('delivery sweeper: overdue deliveries', () => deliveries.findOverdue(new Date(now), 500));
    await capture('retention sweeper: expired batches', () =>
      batches.findExpired(workspace, new Date(now - 30 * 60_000), 200),
    );
    await capture('retention sweeper: expired test batches', () =>
      batches.findExpiredTests(new Date(now - 30 * 60_000), 200),
    );
    await capture('batch creation sweeper: creates cut off', () => batches.findUnstored(new Date(now - 60_000), 50));
  } finally {
    client.off('commandStarted', onStarted);
  }
  return captured;
}
