// PublicApi's order of checks (docs/interface.md#order-of-checks), in process on the real
// authenticator, rate limiter and GenerationService: authentication -> scope -> rate limit
// -> validation -> operation. Each step is shown to run only when the earlier ones passed:
// the parse step (validation) records whether it ran, the bucket shows whether it was spent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectId } from 'mongodb';
import type { CallContext, CreateRequest } from '../../src/api/public-api.ts';
import { DomainError, validationError } from '../../src/domain/errors.ts';
import { startInProcessStack, type InProcessStack } from '../harness/in-process.ts';

let stack: InProcessStack;
let workspaceId: ObjectId;
let templateId: string;

beforeAll(async () => {
  stack = await startInProcessStack();
  workspaceId = await stack.workspace();
  templateId = await stack.template(workspaceId);
});

afterAll(async () => {
  await stack?.close();
});

/** A parse step that records that validation ran, and fails it when told to. */
function parseStep(valid: boolean) {
  const step = {
    ran: false,
    parse: (): CreateRequest => {
      step.ran = true;
      if (!valid) throw validationError([{ field: 'templateId', issue: 'must be at least 1 character' }]);
      return { input: { templateId, variables: {}, format: 'pdf' }, idempotencyKey: undefined };
    },
  };
  return step;
}

async function attempt(authorization: string | undefined, valid: boolean) {
  const ctx: CallContext = { authorization };
  const step = parseStep(valid);
  const outcome = await stack.api.createGeneration(ctx, step.parse).then(
    (created) => ({ ok: true as const, view: created.generation }),
    (err: unknown) => ({ ok: false as const, code: err instanceof DomainError ? err.code : String(err) }),
  );
  return { outcome, parsed: step.ran, rateLimit: ctx.rateLimit };
}

async function remaining(keyId: ObjectId, rate = { perSecond: 20, burst: 40 }): Promise<number> {
  return (await stack.repositories.rateLimits.peek(keyId, rate)).remaining;
}

describe('order of checks', () => {
  it('authentication first: a bad or unknown key is 401 before validation, and spends nothing', async () => {
    for (const [authorization, code] of [
      [undefined, 'UNAUTHORIZED'],
      ['Basic abc', 'UNAUTHORIZED'],
      [`Bearer svc_live_${'x'.repeat(40)}`, 'API_KEY_INVALID'],
    ] as const) {
      const result = await attempt(authorization, false);
      expect(result.outcome, String(authorization)).toEqual({ ok: false, code });
      expect(result.parsed).toBe(false);
      // Answered before the key is known: the default policy, unspent.
      expect(result.rateLimit).toMatchObject({ limit: 40, remaining: 40 });
    }
  });

  it('a revoked key is 401 API_KEY_REVOKED', async () => {
    const key = await stack.apiKey(workspaceId, ['generations:trigger']);
    await stack.repositories.apiKeys.revoke(key.id, new Date());
    const result = await attempt(`Bearer ${key.secret}`, false);
    expect(result.outcome).toEqual({ ok: false, code: 'API_KEY_REVOKED' });
    expect(result.parsed).toBe(false);
  });

  it('scope second: a key without the scope is 403 before the rate limit and validation', async () => {
    const key = await stack.apiKey(workspaceId, ['generations:read']);
    const result = await attempt(`Bearer ${key.secret}`, false);
    expect(result.outcome).toEqual({ ok: false, code: 'FORBIDDEN' });
    expect(result.parsed).toBe(false);
    expect(await remaining(key.id)).toBe(40);
    // The key is known by now, so the answer shows its own (unspent) budget.
    expect(result.rateLimit).toMatchObject({ limit: 40, remaining: 40 });
  });

  it('rate limit third: an exhausted key is 429 before validation', async () => {
    const rate = { perSecond: 0.01, burst: 1 };
    const key = await stack.apiKey(workspaceId, ['generations:trigger'], rate);
    const first = await attempt(`Bearer ${key.secret}`, false);
    expect(first.outcome).toEqual({ ok: false, code: 'VALIDATION_ERROR' });
    expect(first.parsed).toBe(true);
    const second = await attempt(`Bearer ${key.secret}`, false);
    expect(second.outcome).toEqual({ ok: false, code: 'RATE_LIMITED' });
    expect(second.parsed).toBe(false);
    expect(second.rateLimit).toMatchObject({ allowed: false, remaining: 0 });
    expect(second.rateLimit!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it('validation fourth: an invalid body from a good key is 422 and counts against the budget', async () => {
    // A slow refill, so a loaded machine's pause between the request and the read cannot refill the spent token.
    const key = await stack.apiKey(workspaceId, ['generations:trigger'], { perSecond: 0.01, burst: 40 });
    const result = await attempt(`Bearer ${key.secret}`, false);
    expect(result.outcome).toEqual({ ok: false, code: 'VALIDATION_ERROR' });
    expect(result.parsed).toBe(true);
    // Spent: the answer's budget is one short (read at the request's own moment; a later look
    // at the bucket would find it refilled on a slow machine: 20 per second).
    expect(result.rateLimit).toMatchObject({ allowed: true, limit: 40, remaining: 39 });
  });

  it('then the operation: a good request creates the generation in the key’s workspace', async () => {
    const key = await stack.apiKey(workspaceId, ['generations:trigger', 'generations:read']);
    const result = await attempt(`bearer ${key.secret}`, true);
    expect(result.outcome.ok).toBe(true);
    if (!result.outcome.ok) return;
    expect(result.outcome.view).toMatchObject({ status: 'PENDING', templateId });
    const read = await stack.api.getGeneration(
      { authorization: `Bearer ${key.secret}` },
      () => (result.outcome as { view: { id: string } }).view.id,
    );
    expect(read.workspaceId).toBe(result.outcome.view.workspaceId);
  });
});
