// The access table fails closed, so a forgotten line makes an RPC operator-only; this test
// makes the omission loud instead: every RPC registered on the admin router, and every RPC
// declared in proto/docgen/admin/v1, must map to a domain operation (src/rpc/admin-rpc-map.ts)
// that has its line in src/access/admin-operations.ts. Then the Authorizer against the roles
// table, for each role.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createConnectRouter } from '@connectrpc/connect';
import type { DescService } from '@bufbuild/protobuf';
import { MongoClient, ObjectId } from 'mongodb';
import { ADMIN_OPERATIONS, isAdminOperation, OPERATOR_ONLY, policyOf } from '../../src/access/admin-operations.ts';
import { Authorizer, type Subject } from '../../src/access/authorizer.ts';
import { PERMISSIONS } from '../../src/access/roles.ts';
import { createAdminServices } from '../../src/app/admin-services.ts';
import type { AdminCaller } from '../../src/auth/authentication.ts';
import { createIdentityRepositories } from '../../src/identity/identity.ts';
import { ADMIN_RPCS } from '../../src/rpc/admin-rpc-map.ts';
import { registerAdminRoutes } from '../../src/rpc/admin-routes.ts';
import { ApiKeysRepository } from '../../src/store/api-keys-repository.ts';
import { CertificatesRepository } from '../../src/store/certificates-repository.ts';
import { DeliveriesRepository } from '../../src/store/deliveries-repository.ts';
import { GenerationsRepository } from '../../src/store/generations-repository.ts';
import { BatchesRepository } from '../../src/store/batches-repository.ts';
import { StatsRepository } from '../../src/store/stats-repository.ts';
import { RateLimitsRepository } from '../../src/store/rate-limits-repository.ts';
import { TemplatesRepository } from '../../src/store/templates-repository.ts';
import { WebhookEndpointsRepository } from '../../src/store/webhook-endpoints-repository.ts';
import { WorkspacesRepository } from '../../src/store/workspaces-repository.ts';
import { TEMPLATES_TEST_KEY } from '../harness/test-config.ts';

/** The admin router as the admin listener builds it (the database is never contacted). */
function registeredRpcs(): string[] {
  const db = new MongoClient('mongodb://127.0.0.1:1', { serverSelectionTimeoutMS: 1 }).db('never-used');
  const router = createConnectRouter();
  const deps = {
    repositories: {
      workspaces: new WorkspacesRepository(db),
      apiKeys: new ApiKeysRepository(db),
      templates: new TemplatesRepository(db, TEMPLATES_TEST_KEY),
      webhookEndpoints: new WebhookEndpointsRepository(db),
      deliveries: new DeliveriesRepository(db),
      generations: new GenerationsRepository(db),
      certificates: new CertificatesRepository(db),
      stats: new StatsRepository(db),
      batches: new BatchesRepository(db),
    },
    generationService: {
      list: async () => ({ generations: [], nextPageToken: null }),
      getInAnyWorkspace: async () => Promise.reject(new Error('never called')),
      create: async () => Promise.reject(new Error('never called')),
    },
    objects: { remove: async () => {}, getObject: async () => Buffer.alloc(0) },
    diagnoseTemplate: () => ({ diagnostics: [], suggestedVariables: [] }),
    secretKey: Buffer.alloc(32),
    allowInsecureWebhookUrls: false,
    adminToken: 'x'.repeat(16),
    analyzeTemplate: () => ({ issues: [] }) as never,
    renderPreview: async () => ({ pdf: new Uint8Array(), renderMs: 0 }),
    enqueueDelivery: async () => {},
    identity: {
      repositories: createIdentityRepositories(db),
      rateLimits: new RateLimitsRepository(db),
      portalBaseUrl: () => 'http://127.0.0.1:8081',
    },
  } as Parameters<typeof createAdminServices>[0];
  registerAdminRoutes(router, createAdminServices(deps));
  return router.handlers.map((h) => h.requestPath.replace(/^\//, ''));
}

async function declaredRpcs(): Promise<string[]> {
  const dir = new URL('../../src/gen/docgen/admin/v1/', import.meta.url);
  const names: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('_pb.js'))) {
    const mod = (await import(new URL(file, dir).href)) as Record<string, unknown>;
    for (const value of Object.values(mod)) {
      const service = value as DescService;
      if (service && typeof service === 'object' && service.kind === 'service') {
        for (const method of service.methods) names.push(`${service.typeName}/${method.name}`);
      }
    }
  }
  return names;
}

describe('access table and RPC map', () => {
  it('maps every RPC registered on the admin listener to an operation', () => {
    const registered = registeredRpcs();
    expect(registered.length).toBeGreaterThan(30);
    const missing = registered.filter((rpc) => !Object.hasOwn(ADMIN_RPCS, rpc));
    expect(missing, 'add these to src/rpc/admin-rpc-map.ts (see docs/admin.md, "Authorization")').toEqual([]);
  });

  it('maps every RPC declared in docgen.admin.v1, and none that does not exist', async () => {
    const declared = await declaredRpcs();
    expect(declared.filter((rpc) => !Object.hasOwn(ADMIN_RPCS, rpc))).toEqual([]);
    expect(Object.keys(ADMIN_RPCS).filter((rpc) => !declared.includes(rpc))).toEqual([]);
  });

  it('maps to operations of the table, each operation served by one RPC', () => {
    const operations = Object.values(ADMIN_RPCS).map((b) => b.operation);
    expect(operations.filter((op) => !isAdminOperation(op))).toEqual([]);
    expect(new Set(operations).size).toBe(operations.length);
    expect(Object.keys(ADMIN_OPERATIONS).filter((op) => !operations.includes(op as never))).toEqual([]);
  });

  it('says where the workspace is for every workspace-scoped operation, and the audit target of every change', () => {
    for (const [rpc, binding] of Object.entries(ADMIN_RPCS)) {
      const policy = policyOf(binding.operation);
      if (policy.scope === 'workspace' && policy.access !== 'signed-in') expect(binding.subject, rpc).toBeDefined();
      if (policy.changes) expect(binding.target, rpc).toBeDefined();
      else expect(binding.target, rpc).toBeUndefined();
    }
  });

  it('fails closed: an operation without a line is operator-only, state-changing, and refused to members', async () => {
    expect(policyOf('docgen.admin.v1.NewService/DoSomething')).toBe(OPERATOR_ONLY);
    expect(policyOf('toString')).toBe(OPERATOR_ONLY);
    const authorizer = new Authorizer({} as never);
    const member = { kind: 'member', user: {}, sessionKey: {}, memberships: [] } as unknown as AdminCaller;
    await expect(
      authorizer.authorize(member, 'docgen.admin.v1.NewService/DoSomething', undefined),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(
      authorizer.authorize(undefined, 'docgen.admin.v1.NewService/DoSomething', undefined),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(
      authorizer.authorize({ kind: 'operator' }, 'docgen.admin.v1.NewService/DoSomething', undefined),
    ).resolves.toMatchObject({ workspaceId: null });
  });

  it('every right belongs to the owner', () => {
    for (const [operation, policy] of Object.entries(ADMIN_OPERATIONS)) {
      if (policy.access in PERMISSIONS)
        expect(PERMISSIONS[policy.access as keyof typeof PERMISSIONS].roles, operation).toContain('owner');
    }
  });
});

describe('authorizer: the roles table', () => {
  const mine = new ObjectId();
  const theirs = new ObjectId();
  const objects = new Map<string, ObjectId>();
  const object = (prefix: string, workspace: ObjectId) => {
    const id = new ObjectId();
    objects.set(id.toHexString(), workspace);
    return `${prefix}${id.toHexString()}`;
  };
  const lookup = async (id: ObjectId) => {
    const workspaceId = objects.get(id.toHexString());
    return workspaceId ? { workspaceId } : null;
  };
  const authorizer = new Authorizer({
    template: lookup,
    apiKey: lookup,
    webhookEndpoint: lookup,
    delivery: lookup,
    generation: lookup,
    asset: lookup,
    certificate: lookup,
  });
  const member = (role: 'owner' | 'editor' | 'viewer'): AdminCaller =>
    ({
      kind: 'member',
      user: {},
      sessionKey: new ObjectId(),
      memberships: [{ workspaceId: mine, role }],
    }) as unknown as AdminCaller;
  const tpl = object('tpl_', mine);
  const key = object('key_', mine);
  const gen = object('gen_', mine);
  const otherTpl = object('tpl_', theirs);
  const ws = `ws_${mine.toHexString()}`;
  const S = 'docgen.admin.v1.';
  /** As the access interceptor does: the RPC's operation and subject, to the Authorizer. */
  const authorizeRpc = (caller: AdminCaller, rpc: string, request: Record<string, unknown>) => {
    const binding = ADMIN_RPCS[rpc]!;
    const subject: Subject | undefined = binding.subject?.(request);
    return authorizer.authorize(caller, binding.operation, subject);
  };
  const calls: [string, Record<string, unknown>][] = [
    ['TemplateService/GetTemplate', { id: tpl }],
    ['TemplateService/PublishTemplateVersion', { templateId: tpl, version: 2 }],
    ['TemplateService/CreateTemplate', { workspaceId: ws }],
    ['ApiKeyService/ListApiKeys', { workspaceId: ws }],
    ['ApiKeyService/CreateApiKey', { workspaceId: ws }],
    ['ApiKeyService/RevokeApiKey', { id: key }],
    ['GenerationAdminService/DeleteGeneration', { id: gen }],
    ['MemberService/ListMembers', { workspaceId: ws }],
    ['MemberService/InviteMember', { workspaceId: ws }],
    ['AuditService/ListAuditEvents', { workspaceId: ws }],
    ['UserService/InviteUser', { workspaceId: ws }],
  ];
  const expected: Record<string, string> = {
    //          Get Pub Cre LsK CrK Rev Del LsM Inv Aud Usr
    owner: '    ok  ok  ok  ok  ok  ok  ok  ok  ok  ok  no',
    editor: '   ok  ok  ok  ok  no  no  no  ok  no  no  no',
    viewer: '   ok  no  no  ok  no  no  no  ok  no  no  no',
  };

  for (const [role, row] of Object.entries(expected)) {
    it(`${role}: allows and refuses as the table says`, async () => {
      const want = row.trim().split(/\s+/);
      const got: string[] = [];
      for (const [rpc, request] of calls) {
        try {
          await authorizeRpc(member(role as 'owner'), `${S}${rpc}`, request);
          got.push('ok');
        } catch (err) {
          expect((err as { code: string }).code, rpc).toBe('FORBIDDEN');
          got.push('no');
        }
      }
      expect(got).toEqual(want);
    });
  }

  it("answers NOT_FOUND for another workspace's objects, as for missing ones, whatever the role", async () => {
    for (const request of [{ id: otherTpl }, { id: `tpl_${new ObjectId().toHexString()}` }]) {
      await expect(authorizeRpc(member('owner'), `${S}TemplateService/ArchiveTemplate`, request)).rejects.toMatchObject(
        {
          code: 'NOT_FOUND',
          message: `Template ${request.id} not found`,
        },
      );
    }
    await expect(
      authorizeRpc(member('viewer'), `${S}ApiKeyService/CreateApiKey`, {
        workspaceId: `ws_${theirs.toHexString()}`,
      }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
