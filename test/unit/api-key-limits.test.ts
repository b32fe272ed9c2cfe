// Owners choose keys' rates up to the operator's defaults and hold up to
// DOCGEN_API_KEYS_PER_WORKSPACE active keys; beyond them only the operator token creates keys
// (issue 32: otherwise any owner could undo the operator's fair share between tenants).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, ConnectError } from '@connectrpc/connect';
import { startAdminInProcess, type AdminInProcess, type SignedInMember } from '../harness/admin-in-process.ts';
import { rejection } from '../harness/in-process.ts';

let admin: AdminInProcess;
let workspaceId: string;
let owner: SignedInMember;

beforeAll(async () => {
  admin = await startAdminInProcess({
    apiKeyLimits: { defaultRatePerSecond: 20, defaultBurst: 40, maxKeysPerWorkspace: 3 },
  });
  workspaceId = await admin.workspace('limits');
  owner = await admin.member(workspaceId, 'owner');
});

afterAll(async () => {
  await admin?.close();
});

const create = (options: typeof owner.options, rate: { perSecond?: number; burst?: number } = {}) =>
  admin.clients.apiKeys.createApiKey(
    {
      workspaceId,
      name: 'k',
      scopes: ['generations:trigger'],
      rateLimitPerSecond: rate.perSecond,
      rateLimitBurst: rate.burst,
    },
    options,
  );

describe('API key rates and counts', () => {
  it('an owner cannot raise a key above the default rate or burst; the operator can', async () => {
    const fast = await rejection(create(owner.options, { perSecond: 1_000_000 }), ConnectError);
    expect(fast.code).toBe(Code.PermissionDenied);
    expect(fast.rawMessage).toContain('above the service default of 20/s (DOCGEN_RATE_LIMIT_PER_SECOND)');
    const bursty = await rejection(create(owner.options, { burst: 41 }), ConnectError);
    expect(bursty.code).toBe(Code.PermissionDenied);
    expect(bursty.rawMessage).toContain('DOCGEN_RATE_LIMIT_BURST');
    // Nothing was stored by the refusals.
    const listed = await admin.clients.apiKeys.listApiKeys({ workspaceId }, admin.operator);
    expect(listed.apiKeys).toEqual([]);

    // At or below the default, and the default itself, the owner decides.
    const slower = await create(owner.options, { perSecond: 5, burst: 40 });
    expect(slower.apiKey?.rateLimitPerSecond).toBe(5);
    const faster = await create(admin.operator, { perSecond: 500, burst: 1000 });
    expect(faster.apiKey?.rateLimitPerSecond).toBe(500);
    expect(faster.apiKey?.rateLimitBurst).toBe(1000);
  });

  it('an owner creates keys up to the cap of active keys, revoking frees a place; the operator goes past it', async () => {
    // Two keys exist (the test above); the cap is 3.
    const third = await create(owner.options);
    const refused = await rejection(create(owner.options), ConnectError);
    expect(refused.code).toBe(Code.PermissionDenied);
    expect(refused.rawMessage).toContain('3 active API keys');
    expect(refused.rawMessage).toContain('DOCGEN_API_KEYS_PER_WORKSPACE=3');
    await admin.clients.apiKeys.revokeApiKey({ id: third.apiKey!.id }, owner.options);
    await create(owner.options);
    await create(admin.operator);
    const listed = await admin.clients.apiKeys.listApiKeys({ workspaceId }, admin.operator);
    expect(listed.apiKeys.filter((k) => !k.revokedAt)).toHaveLength(4);
  });
});
