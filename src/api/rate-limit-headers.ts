import type { RateLimitDecision } from '../store/rate-limits-repository.ts';

/** RateLimit-* headers (IETF draft) plus Retry-After when refused; same for REST and RPC. */
export function writeRateLimitHeaders(
  decision: RateLimitDecision | undefined,
  set: (name: string, value: string) => void,
): void {
  if (!decision) return;
  set('RateLimit-Limit', String(decision.limit));
  set('RateLimit-Remaining', String(decision.remaining));
  set('RateLimit-Reset', String(decision.resetSeconds));
  if (!decision.allowed) set('Retry-After', String(decision.retryAfterSeconds));
}
