// The public and admin APIs on a MongoDB that fails the way a replica set does, shown on the
// stand-in through the fault proxy (test/harness/mongo-fault-proxy.ts: step-down errors,
// write-concern errors, stalled and cut connections, an election window), plus what the
// stand-in hides about documents: BSON's 16 MiB, and lists that promise newest first.
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient, ObjectId, type Db } from 'mongodb';
import { classifyError } from '../../src/api/error-classification.ts';
import { parseId, formatId } from '../../src/domain/ids.ts';
import { GenerationService } from '../../src/gen/docgen/v1/generation_pb.js';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { TemplateVersionView } from '../../src/gen/docgen/admin/v1/template_pb.js';
import type { FinalEvent } from '../../src/queue/messages.ts';
import { COLLECTIONS, type DeliveryDoc } from '../../src/store/documents.ts';
import { DeliveriesRepository } from '../../src/store/deliveries-repository.ts';
import { SessionsRepository } from '../../src/store/sessions-repository.ts';
import { userIdForEmail } from '../../src/store/users-repository.ts';
import { DeliveryDispatcher, legacyDeliveryIdFor, newDeliveryDoc } from '../../src/webhooks/delivery-dispatcher.ts';
import { freePort } from '../harness/free-port.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { postJson, publishedTemplate, request, startApiStack, type ApiStack } from '../e2e/api-stack.ts';

let stack: ApiStack;
let workspaceId: string;
let templateId: string;
let secret: string;
let db: Db;
let direct: MongoClient;

beforeAll(async () => {
  stack = await startApiStack({
    mongoProxy: {},
    // A body that fits the HTTP limit but not a MongoDB document once stored as BSON.
    env: { DOCGEN_MAX_BODY_BYTES: String(64 * 1024 * 1024), DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true' },
  });
  workspaceId = await stack.workspace('data layer');
  templateId = await publishedTemplate(stack.admin, workspaceId);
  secret = (await stack.key(workspaceId)).secret;
  // The test's own view of the database, not through the proxy.
  direct = new MongoClient(stack.deps.mongo.url);
  await direct.connect();
  db = direct.db(stack.deps.mongo.database);
}, 120_000);

afterAll(async () => {
  await direct?.close();
  await stack?.close();
});

const proxy = () => stack.mongoProxy!;
const generationsOf = () =>
  db.collection(COLLECTIONS.generations).countDocuments({ workspaceId: parseId('workspace', workspaceId)! });
const create = (headers: Record<string, string> = {}) =>
  postJson(stack.baseUrl, secret, { templateId, variables: { name: 'Ada' } }, headers);

describe('transient database failures reach clients as 503 UNAVAILABLE with Retry-After', () => {
  it('a primary stepping down for longer than the driver retries: REST 503 with Retry-After, never 500; then 201 again', async () => {
    const before = await generationsOf();
    const stepDown = proxy().notWritablePrimary(60_000, ['insert']);
    try {
      const answer = await create();
      expect(answer.status, answer.text).toBe(503);
      expect(answer.body.error.code).toBe('UNAVAILABLE');
      expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // The driver retried the write once (a retryable write on a replica-set primary).
      expect(stepDown.applied).toBeGreaterThanOrEqual(2);
    } finally {
      stepDown.remove();
    }
    expect(await generationsOf()).toBe(before);
    expect((await create()).status).toBe(201);
  });

  it('InterruptedDueToReplStateChange on the rate limiter and NotPrimaryNoSecondaryOk on reads: 503 over REST, Unavailable over Connect', async () => {
    const interrupted = proxy().interruptedDueToReplStateChange(60_000, ['findAndModify']);
    try {
      const answer = await create();
      expect(answer.status, answer.text).toBe(503);
      expect(answer.headers['retry-after']).toBeDefined();
    } finally {
      interrupted.remove();
    }
    const created = (await create()).body as { id: string };
    const notPrimary = proxy().inject({
      commands: ['find'],
      collection: COLLECTIONS.generations,
      action: { kind: 'error', code: 13435, codeName: 'NotPrimaryNoSecondaryOk' },
    });
    try {
      const read = await request(stack.baseUrl, {
        path: `/v1/generations/${created.id}`,
        headers: { authorization: `Bearer ${secret}` },
      });
      expect(read.status, read.text).toBe(503);
      expect(read.body.error.code).toBe('UNAVAILABLE');

      const client = createClient(
        GenerationService,
        createConnectTransport({ baseUrl: stack.baseUrl, httpVersion: '1.1' }),
      );
      const err = await client
        .getGeneration({ id: created.id }, { headers: { authorization: `Bearer ${secret}` } })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.Unavailable);
      expect(Number((err as ConnectError).metadata.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      notPrimary.remove();
    }
  });

  it('a writeConcernError on the insert: 503, and the retry with the same Idempotency-Key gets the generation that was written', async () => {
    const before = await generationsOf();
    const fault = proxy().inject({
      commands: ['insert'],
      collection: COLLECTIONS.generations,
      times: 1,
      action: { kind: 'writeConcernError', code: 64, codeName: 'WriteConcernFailed' },
    });
    const key = `wce-${new ObjectId().toHexString()}`;
    const first = await create({ 'Idempotency-Key': key });
    expect(fault.applied).toBe(1);
    expect(first.status, first.text).toBe(503);
    expect(first.headers['retry-after']).toBeDefined();
    // The write happened on the primary: the retry finds it.
    const retry = await create({ 'Idempotency-Key': key });
    expect(retry.status, retry.text).toBe(201);
    expect(await generationsOf()).toBe(before + 1);
    const again = await create({ 'Idempotency-Key': key });
    expect(again.body.id).toBe(retry.body.id);
  });

  it('a connection cut after the insert reached the server: the driver retries, the write is applied once', async () => {
    const before = await generationsOf();
    const cut = proxy().inject({
      commands: ['insert'],
      collection: COLLECTIONS.generations,
      times: 1,
      action: { kind: 'close', afterForward: true },
    });
    const answer = await create();
    expect(cut.applied).toBe(1);
    expect(answer.status, answer.text).toBe(201);
    expect(await generationsOf()).toBe(before + 1);
  });
});

describe("the driver's own failures, as the driver raises them", () => {
  it('an exhausted pool, no server to select, and a server error code are UNAVAILABLE; other errors stay INTERNAL', async () => {
    // One connection, held 2 s by a stalled command: the next operation waits 200 ms for it.
    const client = new MongoClient(proxy().url, { maxPoolSize: 1, waitQueueTimeoutMS: 200 });
    await client.connect();
    const stall = proxy().inject({
      commands: ['find'],
      collection: 'held',
      times: 1,
      action: { kind: 'delay', ms: 2_000 },
    });
    try {
      const collection = client.db(stack.deps.mongo.database).collection('held');
      const holding = collection.findOne({});
      await pollUntil(
        () => stall.applied,
        (n) => n === 1,
        { description: 'the find to stall' },
      );
      const poolError = await collection.findOne({ other: 1 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      await holding;
      expect(String(poolError)).toMatch(/pool/i);
      expect(classifyError(poolError)).toMatchObject({ code: 'UNAVAILABLE', retryAfterSeconds: 2 });
    } finally {
      stall.remove();
      await client.close();
    }

    // Nothing listens: no server can be selected.
    const nowhere = new MongoClient(`mongodb://127.0.0.1:${await freePort()}/?directConnection=true`, {
      serverSelectionTimeoutMS: 300,
    });
    const selection = await nowhere
      .db('x')
      .command({ ping: 1 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    await nowhere.close();
    expect(classifyError(selection)).toMatchObject({ code: 'UNAVAILABLE' });

    // A duplicate key is the caller's business, not an outage; a plain error with a step-down
    // code is not a MongoDB error at all.
    const dup = await db
      .collection('dups')
      .insertMany([
        { _id: new ObjectId('000000000000000000000001') },
        { _id: new ObjectId('000000000000000000000001') },
      ])
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(classifyError(dup).code).toBe('INTERNAL');
    expect(classifyError(Object.assign(new Error('not primary'), { code: 10107 })).code).toBe('INTERNAL');
  });
});

describe('idempotency without the stall race', () => {
  it('a create whose insert stalls 6 s, retried by the client with its key meanwhile, ends with one generation', async () => {
    const before = await generationsOf();
    const stall = proxy().inject({
      commands: ['insert'],
      collection: COLLECTIONS.generations,
      times: 1,
      action: { kind: 'delay', ms: 6_000 },
    });
    const key = `stall-${new ObjectId().toHexString()}`;
    // The client gives up after 1.5 s and retries with the same key.
    const abandoned = new AbortController();
    const firstAnswer = fetch(`${stack.baseUrl}/v1/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ templateId, variables: { name: 'Ada' } }),
      signal: abandoned.signal,
    }).catch(() => undefined);
    await pollUntil(
      () => stall.applied,
      (n) => n === 1,
      { timeoutMs: 5_000, description: 'the insert to stall' },
    );
    setTimeout(() => abandoned.abort(), 1_500);
    await firstAnswer;
    const retried = await create({ 'Idempotency-Key': key });
    expect(retried.status, retried.text).toBe(201);
    // The stalled insert reaches the server after its 6 s and meets the retry's row.
    await new Promise((resolve) => setTimeout(resolve, 6_500));
    expect(await generationsOf()).toBe(before + 1);
    const rows = await db
      .collection(COLLECTIONS.generations)
      .find({ _id: parseId('generation', retried.body.id)! })
      .toArray();
    expect(rows).toHaveLength(1);
    expect((await create({ 'Idempotency-Key': key })).body.id).toBe(retried.body.id);
  }, 30_000);
});

describe('an election window', () => {
  it('readiness answers quickly throughout; a create sent during the window waits for the new primary and succeeds', async () => {
    const readyz = async () => {
      const started = performance.now();
      const res = await fetch(`http://127.0.0.1:${stack.app.opsPort}/readyz`);
      return { status: res.status, text: await res.text(), ms: performance.now() - started };
    };
    expect((await readyz()).status).toBe(200);
    const windowMs = 12_000;
    const started = performance.now();
    const election = proxy().electionWindow(windowMs);
    const during = create();
    const probes: Array<{ status: number; text: string; ms: number }> = [];
    while (performance.now() - started < windowMs - 1_000) {
      probes.push(await readyz());
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await election;
    const answer = await during;
    expect(answer.status, answer.text).toBe(201);
    // It waited out the window instead of failing.
    expect(performance.now() - started).toBeGreaterThanOrEqual(windowMs - 500);
    // The ops server bounds each check at 2 s; nothing waited for the election.
    expect(Math.max(...probes.map((p) => p.ms))).toBeLessThan(3_000);
    expect(probes.some((p) => p.status === 503)).toBe(true);
    await pollUntil(readyz, (r) => r.status === 200, { timeoutMs: 15_000, description: 'readiness after the window' });
  }, 60_000);
});

describe('documents as MongoDB stores them', () => {
  it('variables over 16 MiB as BSON (a 3 MiB JSON array) are refused with 422 naming them, and nothing is stored', async () => {
    const before = await generationsOf();
    const numbers = new Array(1_500_000).fill(0);
    const body = JSON.stringify({ templateId, variables: { numbers } });
    expect(body.length).toBeLessThan(3.5 * 1024 * 1024);
    const answer = await postJson(stack.baseUrl, secret, body);
    expect(answer.status, answer.text.slice(0, 300)).toBe(422);
    expect(answer.body.error.code).toBe('VALIDATION_ERROR');
    expect(answer.body.error.details[0].field).toBe('variables');
    expect(answer.body.error.details[0].issue).toMatch(/MiB as stored \(BSON\), more than the 15\.9 MiB/);
    expect(await generationsOf()).toBe(before);
  }, 60_000);

  it('a delivery keeps its latest 50 attempts however many redelivery rounds run, numbered on', async () => {
    const deliveries = stack.app.infrastructure.repositories.deliveries;
    const e: FinalEvent = {
      eventId: formatId('event', new ObjectId()),
      event: 'generation.completed',
      generationId: formatId('generation', new ObjectId()),
      workspaceId,
      timestamp: Math.floor(Date.now() / 1000),
    };
    const doc = newDeliveryDoc(e, new ObjectId(), new Date());
    await deliveries.insertOnce(doc);
    let current = (await deliveries.get(doc._id))!;
    for (let n = 1; n <= 130; n++) {
      const attempt = { number: n, attemptedAt: new Date(), statusCode: 500, error: 'HTTP 500', durationMs: 3 };
      const next =
        current.roundAttempts === 5
          ? ({ status: 'DROPPED' } as const)
          : ({ status: 'PENDING', nextAttemptAt: new Date() } as const);
      current = (await deliveries.recordAttempt(doc._id, current.round, current.roundAttempts, attempt, next))!;
      if (current.status === 'DROPPED') current = (await deliveries.startNewRound(doc._id))!;
    }
    expect(current.attempts).toHaveLength(50);
    expect(current.attempts.map((a) => a.number)).toEqual(Array.from({ length: 50 }, (_, i) => 81 + i));
    expect(current.attemptCount).toBe(130);
    const view = await stack.admin.deliveries.getDelivery({ id: formatId('delivery', doc._id) });
    expect(view.delivery?.attempts.at(-1)?.number).toBe(130);
  });

  it("ListTemplateVersions with the BASIC view leaves out each version's body, CSS, partials and sample data", async () => {
    const big = 'x'.repeat(200_000);
    const created = await stack.admin.templates.createTemplate({
      workspaceId,
      name: 'versions',
      content: {
        body: `<p>${big}</p>`,
        css: 'p { color: red }',
        partials: { footer: big },
        variables: [{ name: 'name', required: false }],
        sampleData: { name: big },
      },
    });
    const templateId = created.template!.id;
    for (let i = 0; i < 3; i++) {
      await stack.admin.templates.createTemplateVersion({
        templateId,
        content: {
          body: `<p>${i}${big}</p>`,
          variables: [{ name: 'name', required: false }],
          sampleData: { name: big },
        },
      });
    }
    const basic = await stack.admin.templates.listTemplateVersions({ templateId, view: TemplateVersionView.BASIC });
    expect(basic.versions.map((v) => v.version)).toEqual([1, 2, 3, 4]);
    for (const v of basic.versions) {
      expect(v.content).toMatchObject({ body: '', css: '', partials: {} });
      expect(v.content?.sampleData).toBeUndefined();
      expect(v.content?.variables.map((d) => d.name)).toEqual(['name']);
      expect(v.content?.pdfOptions).toBeDefined();
    }
    // Unset is everything, as before the field; GetTemplateVersion returns one whole.
    const full = await stack.admin.templates.listTemplateVersions({ templateId });
    expect(full.versions[0]!.content?.partials.footer).toBe(big);
    const one = await stack.admin.templates.getTemplateVersion({ templateId, version: 4 });
    expect(one.version?.content?.body).toBe(`<p>2${big}</p>`);
  });

  it('the sweepers read only the fields they use, never the variables', async () => {
    const { generations } = stack.app.infrastructure.repositories;
    const doc = generations.newDoc({
      workspaceId: parseId('workspace', workspaceId)!,
      templateId: null,
      templateRef: 'tpl_unknown',
      templateName: '',
      data: { big: 'x'.repeat(100_000) },
    });
    doc.createdAt = new Date(Date.now() - 3_600_000);
    doc.updatedAt = doc.createdAt;
    doc.status = 'FAILED';
    doc.eventPublished = false;
    await generations.insert(doc);
    const unpublished = await generations.findUnpublishedEvents(new Date(), 1_000);
    const expired = await generations.findExpired(doc.workspaceId, new Date(), 1_000);
    for (const rows of [unpublished, expired]) {
      const row = rows.find((r) => r._id.equals(doc._id));
      expect(row).toBeDefined();
      expect(row).not.toHaveProperty('data');
      expect(row).toMatchObject({ status: 'FAILED', workspaceId: doc.workspaceId });
    }
    await db
      .collection(COLLECTIONS.generations)
      .updateOne({ _id: doc._id }, { $set: { status: 'PENDING', jobPublishedAt: null } });
    const stranded = (await generations.findStranded(new Date(), 1_000, 60_000, 1_000)).find((r) =>
      r._id.equals(doc._id),
    );
    // The workspace (and batch, absent here) route the job to its lane (src/queue/fair-puller.ts).
    expect(stranded).toEqual({
      _id: doc._id,
      workspaceId: doc.workspaceId,
      status: 'PENDING',
      jobPublishedAt: null,
      attempts: 0,
    });
    await generations.delete(doc._id);
  });

  it('ListDeliveries is newest first for deliveries inserted oldest first; a delivery written under the old id still lists and is not dispatched twice', async () => {
    const endpoint = await stack.admin.webhooks.createWebhookEndpoint({
      workspaceId,
      // Never called: this stack has no webhooks role; the deliveries are only listed.
      url: 'http://127.0.0.1:9/hook',
      events: ['generation.completed'],
    });
    const endpointId = parseId('webhookEndpoint', endpoint.endpoint!.id)!;
    const { repositories } = stack.app.infrastructure;
    const published: string[] = [];
    const dispatcher = new DeliveryDispatcher({
      endpoints: repositories.webhookEndpoints,
      deliveries: repositories.deliveries,
      publishJob: async (job) => void published.push(job.deliveryId),
    });
    const base = Math.floor(Date.now() / 1000) - 3_600;
    const event = (offset: number): FinalEvent => ({
      eventId: formatId('event', new ObjectId()),
      event: 'generation.completed',
      generationId: formatId('generation', new ObjectId()),
      workspaceId,
      timestamp: base + offset,
    });
    // A delivery stored by docgen 0.1: its id has no time order (derived from a hash).
    const old = event(-60);
    const oldDoc: DeliveryDoc = {
      ...newDeliveryDoc(old, endpointId, new Date((base - 60) * 1000)),
      _id: legacyDeliveryIdFor(parseId('event', old.eventId)!, endpointId),
    };
    delete oldDoc.attemptCount;
    await db.collection<DeliveryDoc>(COLLECTIONS.deliveries).insertOne(oldDoc);
    const events = [0, 1, 2, 3, 4].map((i) => event(i * 10));
    for (const e of events) await dispatcher.dispatch(e);
    // The old event comes round again (JetStream redelivers it after an upgrade): no second delivery.
    expect(await dispatcher.dispatch(old)).toEqual({ endpoints: 1, created: 0 });
    const listed = await stack.admin.deliveries.listDeliveries({ endpointId: endpoint.endpoint!.id });
    const newOnes = listed.deliveries.filter((d) => d.eventId !== old.eventId);
    expect(newOnes.map((d) => d.eventId)).toEqual(events.map((e) => e.eventId).reverse());
    expect(listed.deliveries.filter((d) => d.eventId === old.eventId)).toHaveLength(1);
    expect(
      await db.collection(COLLECTIONS.deliveries).countDocuments({ eventId: parseId('event', old.eventId)! }),
    ).toBe(1);
    const fetched = await stack.admin.deliveries.getDelivery({ id: formatId('delivery', oldDoc._id) });
    expect(fetched.delivery?.eventId).toBe(old.eventId);
  });

  it('ListUsers is newest first for users invited one after another; a user stored under the old email-derived id keeps working', async () => {
    const emails = ['first', 'second', 'third', 'fourth'].map(
      (n) => `${n}-${new ObjectId().toHexString()}@example.com`,
    );
    for (const email of emails) {
      await stack.admin.users.inviteUser({ workspaceId, email, role: MemberRole.EDITOR });
    }
    const listed = await stack.admin.users.listUsers({ workspaceId });
    const order = listed.users.map((u) => u.email).filter((e) => emails.includes(e));
    expect(order).toEqual([...emails].reverse());

    // docgen 0.1 stored users under an id derived from the email.
    const legacyEmail = `legacy-${new ObjectId().toHexString()}@example.com`;
    const legacyId = userIdForEmail(legacyEmail);
    await db.collection(COLLECTIONS.users).insertOne({
      _id: legacyId,
      email: legacyEmail,
      displayName: 'Legacy',
      passwordHash: null,
      invitationId: null,
      disabled: false,
      createdAt: new Date(0),
      updatedAt: new Date(0),
    });
    const invited = await stack.admin.users.inviteUser({ workspaceId, email: legacyEmail, role: MemberRole.VIEWER });
    expect(invited.user?.id).toBe(formatId('user', legacyId));
    expect(await db.collection(COLLECTIONS.users).countDocuments({ email: legacyEmail })).toBe(1);
    // Inviting a new address twice makes one user.
    const twice = `twice-${new ObjectId().toHexString()}@example.com`;
    const [a, b] = await Promise.all([
      stack.admin.users.inviteUser({ workspaceId, email: twice, role: MemberRole.VIEWER }),
      stack.admin.users.inviteUser({ workspaceId, email: twice, role: MemberRole.VIEWER }),
    ]);
    expect(a.user?.id).toBe(b.user?.id);
    expect(await db.collection(COLLECTIONS.users).countDocuments({ email: twice })).toBe(1);
  });
});

describe('multi-document writes through a failover', () => {
  it('revoking all sessions of a user and erasing deliveries are retried past step-down errors the driver does not retry', async () => {
    // The repositories through the proxy, as a docgen process has them.
    const client = new MongoClient(proxy().url);
    await client.connect();
    try {
      const proxied = client.db(stack.deps.mongo.database);
      const sessions = new SessionsRepository(proxied);
      const userId = new ObjectId();
      const now = new Date();
      for (let i = 0; i < 3; i++) {
        await sessions.insert({
          _id: new ObjectId(),
          idHash: new ObjectId().toHexString(),
          userId,
          createdAt: now,
          lastSeenAt: now,
          idleExpiresAt: new Date(now.getTime() + 3_600_000),
          absoluteExpiresAt: new Date(now.getTime() + 7_200_000),
          revokedAt: null,
        });
      }
      const stepDown = proxy().inject({
        commands: ['update'],
        collection: COLLECTIONS.sessions,
        times: 2,
        action: {
          kind: 'error',
          code: 11602,
          codeName: 'InterruptedDueToReplStateChange',
          labels: ['RetryableWriteError'],
        },
      });
      expect(await sessions.revokeAllOfUser(userId)).toBe(3);
      expect(stepDown.applied).toBe(2);
      expect(await db.collection(COLLECTIONS.sessions).countDocuments({ userId, revokedAt: null })).toBe(0);

      const deliveries = new DeliveriesRepository(proxied);
      const generationId = new ObjectId();
      const endpointId = new ObjectId();
      for (let i = 0; i < 2; i++) {
        const e: FinalEvent = {
          eventId: formatId('event', new ObjectId()),
          event: 'generation.completed',
          generationId: formatId('generation', generationId),
          workspaceId,
          timestamp: Math.floor(Date.now() / 1000),
        };
        await deliveries.insertOnce(newDeliveryDoc(e, endpointId, new Date()));
      }
      const notPrimary = proxy().notWritablePrimary(60_000, ['delete']);
      const erasing = deliveries.deleteByGeneration(generationId);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      notPrimary.remove();
      expect(await erasing).toBe(2);
      expect(notPrimary.applied).toBeGreaterThanOrEqual(2);
    } finally {
      await client.close();
    }
  });
});
