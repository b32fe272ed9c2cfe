// API keys (docs/interface.md#api-keys). The secret is generated here, returned once, and only its SHA-256
// hash and display prefix are stored.
import { ObjectId } from 'mongodb';
import {
  API_KEY_MODES,
  displayPrefix,
  generateApiKey,
  hashApiKey,
  isApiKeyMode,
  isScope,
  SCOPES,
  type ApiKeyMode,
  type Scope,
} from '../auth/api-keys.ts';
import { configDefault } from '../config/config.ts';
import { DomainError, notFound, validationError, type FieldIssue } from '../domain/errors.ts';
import { formatId } from '../domain/ids.ts';
import type { ApiKeysRepository } from '../store/api-keys-repository.ts';
import type { ApiKeyDoc } from '../store/documents.ts';
import type { PageInput, Page, PageTokens } from '../store/pagination.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import { quoteId, requireId, requireName, requireWorkspace } from '../domain/input.ts';

/** Same ceilings as DOCGEN_RATE_LIMIT_PER_SECOND / DOCGEN_RATE_LIMIT_BURST. */
const MAX_RATE = 1_000_000;

/**
 * What workspace owners may choose on their own: rates up to the operator's defaults
 * (DOCGEN_RATE_LIMIT_PER_SECOND / _BURST) and up to DOCGEN_API_KEYS_PER_WORKSPACE active keys.
 * Beyond them the operator token is needed: otherwise any owner could undo the operator's fair
 * share between tenants.
 */
export interface ApiKeyLimits {
  defaultRatePerSecond: number;
  defaultBurst: number;
  maxKeysPerWorkspace: number;
}

export function defaultApiKeyLimits(): ApiKeyLimits {
  return {
    defaultRatePerSecond: Number(configDefault('DOCGEN_RATE_LIMIT_PER_SECOND')),
    defaultBurst: Number(configDefault('DOCGEN_RATE_LIMIT_BURST')),
    maxKeysPerWorkspace: Number(configDefault('DOCGEN_API_KEYS_PER_WORKSPACE')),
  };
}

/** Who creates the key: the operator may go past ApiKeyLimits. */
export interface KeyCreator {
  operator: boolean;
}

const needsOperator = (message: string) => new DomainError('FORBIDDEN', message);

export interface ApiKeyView {
  id: string;
  workspaceId: string;
  name: string;
  scopes: string[];
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** null: the service default. */
  rateLimitPerSecond: number | null;
  rateLimitBurst: number | null;
  /** `live` or `test` (docs/interface.md#test-mode); the prefix shows it too. */
  mode: ApiKeyMode;
}

export interface CreateApiKeyInput {
  workspaceId: string;
  name: string;
  scopes: string[];
  /** 0 or absent: the service default. */
  rateLimitPerSecond?: number | undefined;
  rateLimitBurst?: number | undefined;
  /** `live` (default, also when empty) or `test`. */
  mode?: string | undefined;
}

export function toApiKeyView(doc: ApiKeyDoc): ApiKeyView {
  return {
    id: formatId('apiKey', doc._id),
    workspaceId: formatId('workspace', doc.workspaceId),
    name: doc.name,
    scopes: [...doc.scopes],
    prefix: doc.prefix,
    createdAt: doc.createdAt,
    lastUsedAt: doc.lastUsedAt,
    revokedAt: doc.revokedAt,
    rateLimitPerSecond: doc.rateLimitPerSecond,
    rateLimitBurst: doc.rateLimitBurst,
    mode: doc.mode ?? 'live',
  };
}

export class ApiKeyAdmin {
  private readonly workspaces: WorkspacesRepository;
  private readonly apiKeys: ApiKeysRepository;
  private readonly pageTokens: PageTokens;
  private readonly limits: ApiKeyLimits;
  constructor(deps: {
    workspaces: WorkspacesRepository;
    apiKeys: ApiKeysRepository;
    pageTokens: PageTokens;
    /** Default: the configuration defaults. */
    limits?: ApiKeyLimits | undefined;
  }) {
    this.workspaces = deps.workspaces;
    this.apiKeys = deps.apiKeys;
    this.pageTokens = deps.pageTokens;
    this.limits = deps.limits ?? defaultApiKeyLimits();
  }

  /** Returns the record and the key itself; the key is never retrievable again. */
  async create(input: CreateApiKeyInput, creator: KeyCreator): Promise<{ apiKey: ApiKeyView; secret: string }> {
    const name = requireName(input.name);
    const scopes = checkScopes(input.scopes);
    const rate = checkRateLimit(input.rateLimitPerSecond, input.rateLimitBurst);
    const mode = checkMode(input.mode);
    if (!creator.operator) this.checkOwnRate(rate);
    const workspace = await requireWorkspace(this.workspaces, input.workspaceId);
    if (!creator.operator) {
      // Two creations at the same moment may both pass: the cap is a fair-share bound, not a count
      // that must be exact, and a transaction per key would cost more than one key too many.
      const active = await this.apiKeys.countActive(workspace._id);
      if (active >= this.limits.maxKeysPerWorkspace) {
        throw needsOperator(
          `This workspace has ${active} active API keys, the most its owners may create (DOCGEN_API_KEYS_PER_WORKSPACE=${this.limits.maxKeysPerWorkspace}). Revoke a key you no longer use, or ask the operator to create this one.`,
        );
      }
    }
    const secret = generateApiKey(mode);
    const doc: ApiKeyDoc = {
      _id: new ObjectId(),
      workspaceId: workspace._id,
      name,
      scopes,
      hash: hashApiKey(secret),
      prefix: displayPrefix(secret),
      createdAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
      rateLimitPerSecond: rate.perSecond,
      rateLimitBurst: rate.burst,
      mode,
    };
    await this.apiKeys.insert(doc);
    return { apiKey: toApiKeyView(doc), secret };
  }

  private checkOwnRate(rate: { perSecond: number | null; burst: number | null }): void {
    const { defaultRatePerSecond, defaultBurst } = this.limits;
    if (rate.perSecond !== null && rate.perSecond > defaultRatePerSecond) {
      throw needsOperator(
        `rateLimitPerSecond ${rate.perSecond} is above the service default of ${defaultRatePerSecond}/s (DOCGEN_RATE_LIMIT_PER_SECOND): only the operator can give a key more. Use at most ${defaultRatePerSecond}, or 0 for the default.`,
      );
    }
    if (rate.burst !== null && rate.burst > defaultBurst) {
      throw needsOperator(
        `rateLimitBurst ${rate.burst} is above the service default of ${defaultBurst} (DOCGEN_RATE_LIMIT_BURST): only the operator can give a key more. Use at most ${defaultBurst}, or 0 for the default.`,
      );
    }
  }

  async list(workspaceId: string, input?: PageInput): Promise<Page<ApiKeyView>> {
    const page = this.pageTokens.request(input, { list: 'apiKeys', filters: { workspace: workspaceId } });
    const workspace = await requireWorkspace(this.workspaces, workspaceId);
    const result = await this.apiKeys.list(workspace._id, page);
    return { items: result.items.map(toApiKeyView), nextPageToken: result.nextPageToken };
  }

  /** Idempotent: revoking a revoked key keeps the first revocation time. */
  async revoke(id: string): Promise<ApiKeyView> {
    const objectId = requireId('apiKey', id, 'id', 'API key');
    const doc = await this.apiKeys.revoke(objectId, new Date());
    if (!doc) throw notFound(`API key ${quoteId(id)}`);
    return toApiKeyView(doc);
  }
}

function checkScopes(value: unknown): Scope[] {
  const list = Array.isArray(value) ? value : [];
  const issues: FieldIssue[] = [];
  const scopes: Scope[] = [];
  for (const raw of list) {
    const scope = typeof raw === 'string' ? raw.trim() : '';
    if (!isScope(scope))
      issues.push({
        field: 'scopes',
        issue: `unknown scope ${JSON.stringify(raw)}; known scopes: ${SCOPES.join(', ')}`,
      });
    else if (!scopes.includes(scope)) scopes.push(scope);
  }
  if (issues.length === 0 && scopes.length === 0) {
    issues.push({ field: 'scopes', issue: `at least one scope is required (${SCOPES.join(', ')})` });
  }
  if (issues.length > 0) throw validationError(issues);
  return scopes;
}

function checkMode(value: string | undefined): ApiKeyMode {
  const mode = (value ?? '').trim().toLowerCase();
  if (mode === '') return 'live';
  if (!isApiKeyMode(mode))
    throw validationError([
      { field: 'mode', issue: `unknown mode ${JSON.stringify(value)}; use ${API_KEY_MODES.join(' or ')}` },
    ]);
  return mode;
}

function checkRateLimit(
  perSecond: number | undefined,
  burst: number | undefined,
): { perSecond: number | null; burst: number | null } {
  const issues: FieldIssue[] = [];
  const rate = perSecond ?? 0;
  const size = burst ?? 0;
  if (!Number.isFinite(rate) || rate < 0 || rate > MAX_RATE) {
    issues.push({ field: 'rateLimitPerSecond', issue: `must be from 0 (service default) to ${MAX_RATE}` });
  }
  if (!Number.isInteger(size) || size < 0 || size > MAX_RATE) {
    issues.push({ field: 'rateLimitBurst', issue: `must be a whole number from 0 (service default) to ${MAX_RATE}` });
  }
  if (issues.length > 0) throw validationError(issues);
  return { perSecond: rate > 0 ? rate : null, burst: size > 0 ? size : null };
}
