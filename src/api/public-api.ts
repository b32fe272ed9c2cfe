// The public API's request pipeline, written once for REST and gRPC/Connect:
// authentication -> scope -> rate limit -> validation -> operation (docs/interface.md#order-of-checks).
// Transports pass the raw credentials and a parse step; they write the rate-limit headers
// from the context afterwards, on success and on error alike.
import type { ApiKeyAuthenticator, Principal } from '../auth/api-key-authenticator.ts';
import type { Scope } from '../auth/api-keys.ts';
import { DomainError } from '../domain/errors.ts';
import type { CreateGenerationInput } from '../generations/create-input.ts';
import type { GenerationPage, GenerationService, ListGenerationsInput } from '../generations/generation-service.ts';
import type { GenerationView } from '../generations/generation-view.ts';
import type { GenerationWaiter } from './generation-waiter.ts';
import type { BatchService, BatchView } from '../batches/batch-service.ts';
import type { CreateBatchInput } from '../batches/batch-input.ts';
import {
  unmeteredDecision,
  type RateLimitDecision,
  type RateLimitsRepository,
} from '../store/rate-limits-repository.ts';

export interface CallContext {
  authorization: string | null | undefined;
  /** Set once the rate limiter has decided, for the RateLimit-* headers. */
  rateLimit?: RateLimitDecision;
}

export interface CreateRequest {
  input: CreateGenerationInput;
  idempotencyKey: string | undefined;
  /** `Prefer: wait=N` (src/api/prefer-wait.ts): seconds to wait for a final state; absent: none. */
  waitSeconds?: number | undefined;
}

export interface CreateBatchRequest {
  input: CreateBatchInput;
  idempotencyKey: string | undefined;
}

export interface CreateOutcome {
  generation: GenerationView;
  /** The wait honoured, in seconds (for `Preference-Applied`); undefined when none was made. */
  waitedSeconds?: number;
}

export interface CreateCallOptions {
  /** Aborts when the caller goes away: a wait ends without a last read. */
  signal?: AbortSignal;
  /** Caps the wait below what was asked (an RPC deadline shorter than the wait). */
  maxWaitMs?: number;
}

export class PublicApi {
  private readonly authenticator: ApiKeyAuthenticator;
  private readonly rateLimits: RateLimitsRepository;
  private readonly generations: GenerationService;
  private readonly waiter: GenerationWaiter | undefined;
  private readonly batches: BatchService | undefined;

  constructor(deps: {
    authenticator: ApiKeyAuthenticator;
    rateLimits: RateLimitsRepository;
    generations: GenerationService;
    /** Serves `Prefer: wait`; without one the preference is not honoured (no Preference-Applied). */
    waiter?: GenerationWaiter | undefined;
    /** Serves /v1/batches; without one, batch calls answer NOT_FOUND. */
    batches?: BatchService | undefined;
  }) {
    this.authenticator = deps.authenticator;
    this.rateLimits = deps.rateLimits;
    this.generations = deps.generations;
    this.waiter = deps.waiter;
    this.batches = deps.batches;
  }

  /** Creates a batch: every item a generation, or (one item invalid) nothing. */
  createBatch(ctx: CallContext, parse: () => CreateBatchRequest): Promise<BatchView> {
    return this.run(ctx, 'generations:trigger', parse, (principal, req) =>
      this.batchService().create(principal, req.input, req.idempotencyKey),
    );
  }

  getBatch(ctx: CallContext, parse: () => string): Promise<BatchView> {
    return this.run(ctx, 'generations:read', parse, (principal, id) => this.batchService().get(principal, id));
  }

  private batchService(): BatchService {
    if (!this.batches) throw new DomainError('NOT_FOUND', 'Batches are not served here');
    return this.batches;
  }

  /** Creates a generation; with `waitSeconds`, answers once it is final or the wait is over. */
  createGeneration(
    ctx: CallContext,
    parse: () => CreateRequest,
    options: CreateCallOptions = {},
  ): Promise<CreateOutcome> {
    return this.run(ctx, 'generations:trigger', parse, async (principal, req) => {
      const generation = await this.generations.create(principal, req.input, req.idempotencyKey);
      if (req.waitSeconds === undefined || req.waitSeconds <= 0 || !this.waiter) return { generation };
      const waitMs = Math.min(req.waitSeconds * 1000, options.maxWaitMs ?? Infinity);
      const final = await this.waiter.waitForFinal(
        generation,
        Math.max(0, waitMs),
        () => this.generations.get(principal, generation.id),
        options.signal,
      );
      return final ? { generation: final, waitedSeconds: req.waitSeconds } : { generation };
    });
  }

  getGeneration(ctx: CallContext, parse: () => string): Promise<GenerationView> {
    return this.run(ctx, 'generations:read', parse, (principal, id) => this.generations.get(principal, id));
  }

  listGenerations(ctx: CallContext, parse: () => ListGenerationsInput): Promise<GenerationPage> {
    return this.run(ctx, 'generations:read', parse, (principal, input) => this.generations.list(principal, input));
  }

  /**
   * RateLimit-* values for answers made before a key is known (401, unknown route, 405,
   * 413, 415): such requests are not counted, so they show the default policy, unspent.
   */
  unmeteredRateLimit(): RateLimitDecision {
    return unmeteredDecision(this.authenticator.defaultRateLimit);
  }

  private async run<I, O>(
    ctx: CallContext,
    scope: Scope,
    parse: () => I,
    operation: (principal: Principal, input: I) => Promise<O>,
  ): Promise<O> {
    ctx.rateLimit ??= this.unmeteredRateLimit();
    const principal = await this.authenticator.authenticate(ctx.authorization);
    if (!principal.scopes.includes(scope)) {
      // Not counted either, but the key is known: show its own budget.
      ctx.rateLimit = await this.rateLimits.peek(principal.keyId, principal.rateLimit).catch(() => ctx.rateLimit);
    }
    this.authenticator.requireScope(principal, scope);
    const decision = await this.rateLimits.take(principal.keyId, principal.rateLimit);
    ctx.rateLimit = decision;
    if (!decision.allowed) {
      throw new DomainError('RATE_LIMITED', 'Rate limit exceeded for this API key', {
        retryAfterSeconds: decision.retryAfterSeconds,
      });
    }
    return operation(principal, parse());
  }
}
