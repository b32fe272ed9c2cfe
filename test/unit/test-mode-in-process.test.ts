// Test mode (docs/interface.md#test-mode) in process, on the MongoDB stand-in: `docgen admin
// key create --mode test` makes a `svc_test_` key; a test key's generations are marked test,
// and each mode sees only its own (lists, gets, Idempotency-Key); webhook endpoints opt in to
// test events. The rendered "TEST" stamp and the deliveries are checked on the real stack
// (test/e2e/test-mode.test.ts).
import { createRouterTransport } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookEndpointAdmin } from '../../src/admin/webhook-endpoint-admin.ts';
import { WebhookTestEvents } from '../../src/admin/webhook-test-event.ts';
import { adminClientsOn, type AdminClients } from '../../src/cli/admin/admin-client.ts';
import { WebhookEndpointService } from '../../src/gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { WebhookEndpointServiceHandler } from '../../src/rpc/admin-webhook-endpoint-service.ts';
import { mapErrors } from '../../src/rpc/connect-errors.ts';
import { DeliveriesRepository } from '../../src/store/deliveries-repository.ts';
import { WebhookEndpointsRepository } from '../../src/store/webhook-endpoints-repository.ts';
import { testPageTokens, testSecretKey } from '../harness/test-config.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { parseId } from '../../src/domain/ids.ts';
import { inProcessAdminClients, inProcessCli } from '../harness/admin-cli.ts';
import { startInProcessStack, type InProcessStack } from '../harness/in-process.ts';

let stack: InProcessStack;
let clients: AdminClients;

beforeAll(async () => {
  stack = await startInProcessStack();
  // The webhook endpoint handlers too (inProcessAdminClients has workspaces, keys, templates).
  const endpoints = new WebhookEndpointsRepository(stack.db);
  const admin = new WebhookEndpointAdmin({
    workspaces: stack.repositories.workspaces,
    endpoints,
    secretKey: testSecretKey(),
    allowInsecureUrls: true,
    pageTokens: testPageTokens(),
  });
  const testEvents = new WebhookTestEvents({
    endpoints,
    deliveries: new DeliveriesRepository(stack.db),
    enqueueDelivery: async () => {},
  });
  const webhooks = adminClientsOn(
    createRouterTransport(({ service }) =>
      service(WebhookEndpointService, mapErrors(new WebhookEndpointServiceHandler(admin, testEvents))),
    ),
  ).webhooks;
  clients = { ...inProcessAdminClients(stack), webhooks };
});

afterAll(async () => {
  await stack?.close();
});

const { cli, json } = inProcessCli({ clients: () => clients });
const scopes = 'generations:trigger,generations:read';

async function keyPair(ws: string) {
  const live = await json('key', 'create', '--workspace', ws, '--name', 'prod', '--scopes', scopes);
  const test = await json('key', 'create', '--workspace', ws, '--name', 'ci', '--scopes', scopes, '--mode', 'test');
  return { live: live.key as string, test: test.key as string };
}

const as = (key: string) => ({ authorization: `Bearer ${key}` });

async function notFoundCode(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'found';
  } catch (err) {
    return err instanceof DomainError ? err.code : String(err);
  }
}

describe('test mode in process', () => {
  it('--mode test makes a svc_test_ key, shown as test in the key list; --mode live or none a svc_live_ one', async () => {
    const ws = (await json('workspace', 'create', '--name', 'Modes')).id as string;
    const test = await json('key', 'create', '--workspace', ws, '--name', 'ci', '--scopes', scopes, '--mode', 'test');
    expect(test.key).toMatch(/^svc_test_[A-Za-z0-9]{40}$/);
    expect(Object.keys(test).sort()).toEqual(['id', 'key']);
    const live = await json('key', 'create', '--workspace', ws, '--name', 'p', '--scopes', scopes, '--mode', 'live');
    expect(live.key).toMatch(/^svc_live_[A-Za-z0-9]{40}$/);
    const keys = (await json('key', 'list', '--workspace', ws)).apiKeys as Array<Record<string, unknown>>;
    expect(keys.map((k) => [k.name, k.mode, String(k.prefix).slice(0, 9)])).toEqual([
      ['p', 'live', 'svc_live_'],
      ['ci', 'test', 'svc_test_'],
    ]);
    const table = await cli('key', 'list', '--workspace', ws);
    expect(table.stdout).toContain('MODE');
    expect(table.stdout).toMatch(/\bci +test +svc_test_/);

    const bad = await cli('key', 'create', '--workspace', ws, '--name', 'x', '--scopes', scopes, '--mode', 'sandbox');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--mode "sandbox" is not a mode: use live or test');
  });

  it('each mode sees only its own generations: lists, gets (404 across modes) and Idempotency-Key', async () => {
    const ws = (await json('workspace', 'create', '--name', 'Split')).id as string;
    const keys = await keyPair(ws);
    const wsId = parseId('workspace', ws)!;
    const template = await stack.template(wsId);
    const create = (key: string, idempotencyKey?: string) =>
      stack.api.createGeneration(as(key), () => ({
        input: { templateId: template, variables: {}, format: 'pdf' },
        idempotencyKey,
      }));

    const testGen = (await create(keys.test)).generation;
    const liveGen = (await create(keys.live)).generation;
    expect(testGen.test).toBe(true);
    expect(liveGen.test).toBe(false);
    const stored = await stack.repositories.generations.get(parseId('generation', testGen.id)!);
    expect(stored).toMatchObject({ test: true });

    const list = async (key: string) =>
      (await stack.api.listGenerations(as(key), () => ({}))).generations.map((g) => g.id);
    expect(await list(keys.test)).toEqual([testGen.id]);
    expect(await list(keys.live)).toEqual([liveGen.id]);
    expect(await notFoundCode(stack.api.getGeneration(as(keys.live), () => testGen.id))).toBe('NOT_FOUND');
    expect(await notFoundCode(stack.api.getGeneration(as(keys.test), () => liveGen.id))).toBe('NOT_FOUND');
    expect((await stack.api.getGeneration(as(keys.test), () => testGen.id)).id).toBe(testGen.id);

    // The same Idempotency-Key in both modes makes one generation in each, never the other's.
    const liveOnce = (await create(keys.live, 'order-42')).generation;
    const testOnce = (await create(keys.test, 'order-42')).generation;
    expect(testOnce.id).not.toBe(liveOnce.id);
    expect(testOnce.test).toBe(true);
    expect((await create(keys.test, 'order-42')).generation.id).toBe(testOnce.id);
    expect((await create(keys.live, 'order-42')).generation.id).toBe(liveOnce.id);

    // A test key's page token is not a live key's.
    for (let i = 0; i < 2; i++) await create(keys.test);
    const first = await stack.api.listGenerations(as(keys.test), () => ({ pageSize: 1 }));
    expect(first.nextPageToken).toEqual(expect.any(String));
    expect(
      await notFoundCode(
        stack.api.listGenerations(as(keys.live), () => ({ pageSize: 1, pageToken: first.nextPageToken! })),
      ),
    ).toBe('VALIDATION_ERROR');

    // The retention sweep's query finds this workspace's finished test generations, no live one.
    const repo = stack.repositories.generations;
    await repo.fail(parseId('generation', testGen.id)!, null, 'finished for the sweep');
    await repo.fail(parseId('generation', liveGen.id)!, null, 'finished for the sweep');
    const expired = await repo.findExpiredTests(new Date(Date.now() + 60_000), 1000);
    const ours = expired.filter((g) => g.workspaceId.equals(wsId)).map((g) => g._id.toHexString());
    expect(ours).toEqual([parseId('generation', testGen.id)!.toHexString()]);
    expect(await repo.findExpiredTests(new Date(Date.now() - 60_000), 1000)).toEqual([]);

    // The admin plane sees both, each with its mode.
    const all = (await stack.generations.list({ workspaceId: wsId }, {})).generations;
    expect(all.filter((g) => g.test)).toHaveLength(4);
    expect(all.filter((g) => !g.test)).toHaveLength(2);
  });

  it('webhook create --test-events opts the endpoint in; without it the endpoint takes live events only', async () => {
    const ws = (await json('workspace', 'create', '--name', 'Hooks')).id as string;
    const url = 'http://127.0.0.1:9/docgen';
    const optedIn = await json(
      'webhook',
      'create',
      '--workspace',
      ws,
      '--url',
      url,
      '--events',
      'generation.completed',
      '--test-events',
    );
    const liveOnly = await json(
      'webhook',
      'create',
      '--workspace',
      ws,
      '--url',
      url,
      '--events',
      'generation.completed',
    );
    const listed = (await json('webhook', 'list', '--workspace', ws)).endpoints as Array<Record<string, unknown>>;
    expect(Object.fromEntries(listed.map((e) => [e.id, e.testEvents]))).toEqual({
      [optedIn.id as string]: true,
      [liveOnly.id as string]: false,
    });
  });
});
