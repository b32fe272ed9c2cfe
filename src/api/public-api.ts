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
}

export class PublicApi {
  private readonly authenticator: ApiKeyAuthenticator;
  private readonly rateLimits: RateLimitsRepository;
  private readonly generations: GenerationService;

  constructor(deps: {
    authenticator: ApiKeyAuthenticator;
    rateLimits: RateLimitsRepository;
    generations: GenerationService;
  }) {
    this.authenticator = deps.authenticator;
    this.rateLimits = deps.rateLimits;
    this.generations = deps.generations;
  }

  createGeneration(ctx: CallContext, parse: () => CreateRequest): Promise<GenerationView> {
    return this.run(ctx, 'generations:trigger', parse, (principal, req) =>
      this.generations.create(principal, req.input, req.idempotencyKey),
    );
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
