// Turns an Authorization header into a principal: the key's workspace, scopes and rate
// limit. Lookups are cached briefly (config api.apiKeyCacheMs, at most 1 s) so that a revoke
// reaches every replica within the cache time without a database read per request.
import type { ObjectId } from 'mongodb';
import { DomainError } from '../domain/errors.ts';
import type { ApiKeysRepository } from '../store/api-keys-repository.ts';
import type { ApiKeyDoc } from '../store/documents.ts';
import type { RateLimitPolicy } from '../store/rate-limits-repository.ts';
import { API_KEY_PATTERN, hashApiKey, type Scope } from './api-keys.ts';

export interface Principal {
  keyId: ObjectId;
  workspaceId: ObjectId;
  scopes: readonly string[];
  rateLimit: RateLimitPolicy;
  /**
   * A test key (`svc_test_…`, docs/interface.md#test-mode): it makes and sees only test
   * generations; a live key only live ones.
   */
  test: boolean;
}

interface CacheEntry {
  doc: ApiKeyDoc | null;
  fetchedAt: number;
}

const LAST_USED_WRITE_INTERVAL_MS = 60_000;

export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly lastUsedWritten = new Map<string, number>();
  private readonly repository: ApiKeysRepository;
  private readonly cacheMs: number;
  private readonly defaults: RateLimitPolicy;

  constructor(repository: ApiKeysRepository, options: { cacheMs: number; defaultRateLimit: RateLimitPolicy }) {
    this.repository = repository;
    this.cacheMs = options.cacheMs;
    this.defaults = options.defaultRateLimit;
  }

  /** The rate limit of keys without their own (shown on answers made before a key is known). */
  get defaultRateLimit(): RateLimitPolicy {
    return this.defaults;
  }

  async authenticate(authorization: string | undefined | null): Promise<Principal> {
    // The auth scheme is case-insensitive (RFC 9110 §11.1); the key itself is exact.
    const match = /^Bearer[ \t]+(\S+)$/i.exec(authorization?.trim() ?? '');
    const key = match?.[1];
    if (!key || !API_KEY_PATTERN.test(key)) {
      throw new DomainError(
        'UNAUTHORIZED',
        'Authorization header missing or malformed: expected "Bearer svc_live_…" or "Bearer svc_test_…"',
      );
    }
    const hash = hashApiKey(key);
    const doc = await this.lookup(hash);
    if (!doc) throw new DomainError('API_KEY_INVALID', 'The API key does not exist');
    if (doc.revokedAt) throw new DomainError('API_KEY_REVOKED', 'The API key has been revoked');
    this.noteUse(doc);
    return {
      keyId: doc._id,
      workspaceId: doc.workspaceId,
      scopes: doc.scopes,
      test: doc.mode === 'test',
      rateLimit: {
        perSecond: doc.rateLimitPerSecond ?? this.defaults.perSecond,
        burst: doc.rateLimitBurst ?? this.defaults.burst,
      },
    };
  }

  requireScope(principal: Principal, scope: Scope): void {
    if (!principal.scopes.includes(scope)) {
      throw new DomainError('FORBIDDEN', `The API key lacks the scope ${scope}`);
    }
  }

  private async lookup(hash: string): Promise<ApiKeyDoc | null> {
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached && now - cached.fetchedAt < this.cacheMs) return cached.doc;
    const doc = await this.repository.findByHash(hash);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(hash, { doc, fetchedAt: now });
    return doc;
  }

  /** lastUsedAt is informational: written at most once a minute per key and process. */
  private noteUse(doc: ApiKeyDoc): void {
    const id = doc._id.toHexString();
    const now = Date.now();
    if (now - (this.lastUsedWritten.get(id) ?? 0) < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWritten.set(id, now);
    this.repository.touch(doc._id, new Date(now)).catch(() => {
      this.lastUsedWritten.delete(id);
    });
  }
}
