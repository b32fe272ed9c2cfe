// The REST `/v1` gateway (docs/interface.md). It maps HTTP onto the same request
// pipeline the Connect handlers use (src/api/public-api.ts), so authentication, scope, rate
// limit and validation are written once. This file only speaks HTTP: routing, bodies,
// query strings, headers and the JSON shapes of the interface.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { CallContext, PublicApi } from '../src/api/public-api.ts';
import { PREFERENCE_APPLIED, parsePreferWait, preferenceApplied } from '../src/api/prefer-wait.ts';
import { writeRateLimitHeaders } from '../src/api/rate-limit-headers.ts';
import { requestIdFrom } from '../src/api/request-id.ts';
import { DomainError, validationError, type FieldIssue } from '../src/domain/errors.ts';
import { UNREAD_BODY_DISCARD_LIMIT_BYTES } from '../src/config/limits.ts';
import {
  VARIABLES_TOO_DEEP,
  parseCreateGenerationBody,
  validateIdempotencyKey,
} from '../src/generations/create-input.ts';
import type { ListGenerationsInput } from '../src/generations/generation-service.ts';
import type { GenerationView } from '../src/generations/generation-view.ts';
import { parseCreateBatchBody } from '../src/batches/batch-input.ts';
import type { BatchView } from '../src/batches/batch-service.ts';
import { BodyError, MethodNotAllowed, sendError } from './rest-errors.ts';

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;

export interface RestGatewayOptions {
  api: PublicApi;
  maxBodyBytes: number;
  /** Most items in one batch (DOCGEN_BATCH_MAX_ITEMS); default DEFAULT_MAX_BATCH_ITEMS. */
  batchMaxItems?: number | undefined;
  /** Called for INTERNAL/UNAVAILABLE errors with the request id (for logging the cause). */
  onError?: (err: unknown, requestId: string) => void;
  /** Called once per answered request, for metrics and access logs. */
  onResponse?: (info: { route: string; method: string; status: number; durationMs: number; requestId: string }) => void;
}

/** Deepest JSON nesting accepted in a body: far above any real document, far below a stack risk. */
export const MAX_JSON_DEPTH = 64;
const LIST_PARAMS = new Set([
  'pageSize',
  'pageToken',
  'status',
  'templateId',
  'createdAfter',
  'createdBefore',
  'batchId',
]);
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/i;

/** The eleven fields of the interface's Generation, in its order, and nothing else. */
export function generationJson(view: GenerationView) {
  return {
    id: view.id,
    workspaceId: view.workspaceId,
    templateId: view.templateId,
    templateName: view.templateName,
    format: view.format,
    status: view.status,
    data: view.data,
    outputUrl: view.outputUrl,
    error: view.error,
    createdAt: view.createdAt.toISOString(),
    updatedAt: view.updatedAt.toISOString(),
  };
}

/** The Batch of docs/interface.md#batches, in its order. */
export function batchJson(view: BatchView) {
  return {
    id: view.id,
    status: view.status,
    total: view.total,
    completed: view.completed,
    failed: view.failed,
    outputUrl: view.outputUrl,
    createdAt: view.createdAt.toISOString(),
    updatedAt: view.updatedAt.toISOString(),
  };
}

interface Route {
  name: string;
  methods: string[];
}

function matchRoute(path: string): { route: Route; id?: string } | undefined {
  if (path === '/v1/generations' || path === '/v1/generations/')
    return { route: { name: '/v1/generations', methods: ['GET', 'POST'] } };
  const match = /^\/v1\/generations\/([^/]+)$/.exec(path);
  if (match)
    return { route: { name: '/v1/generations/{id}', methods: ['GET'] }, id: decodeURIComponentSafe(match[1]!) };
  if (path === '/v1/batches' || path === '/v1/batches/') return { route: { name: '/v1/batches', methods: ['POST'] } };
  const batch = /^\/v1\/batches\/([^/]+)$/.exec(path);
  if (batch) return { route: { name: '/v1/batches/{id}', methods: ['GET'] }, id: decodeURIComponentSafe(batch[1]!) };
  return undefined;
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Returns a request handler for `/v1/…`; it answers every request it is given. */
export function createRestGateway(options: RestGatewayOptions) {
  const { api } = options;

  return async function handle(req: Request, res: Response): Promise<void> {
    const started = performance.now();
    const given = req.headers['x-request-id'];
    const requestId = requestIdFrom(given);
    res.setHeader('X-Request-Id', requestId);
    // docs/interface.md#headers: RateLimit-* on every response, also those answered before a key is known.
    const ctx: CallContext = { authorization: req.headers.authorization, rateLimit: api.unmeteredRateLimit() };
    let routeName = 'unmatched';
    const method = req.method ?? 'GET';
    let status = 500;

    const answer = (code: number, body: unknown) => {
      status = code;
      writeRateLimitHeaders(ctx.rateLimit, (name, value) => res.setHeader(name, value));
      res.statusCode = code;
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Cache-Control', 'no-store');
      res.end(JSON.stringify(body));
    };

    try {
      const url = requestUrl(req.url);
      const matched = url ? matchRoute(url.pathname) : undefined;
      if (!matched) {
        drain(req);
        throw new DomainError('NOT_FOUND', `No route for ${method} ${url?.pathname ?? req.url}`);
      }
      routeName = matched.route.name;
      if (!matched.route.methods.includes(method)) {
        drain(req);
        res.setHeader('Allow', matched.route.methods.join(', '));
        throw new MethodNotAllowed(method, matched.route.methods);
      }

      if (routeName === '/v1/batches') {
        const raw = await readBody(req, options.maxBodyBytes);
        const batch = await api.createBatch(ctx, () => ({
          input: parseCreateBatchBody(parseJsonBody(raw), options.batchMaxItems),
          idempotencyKey: validateIdempotencyKey(headerValue(req.headers['idempotency-key'])),
        }));
        answer(201, batchJson(batch));
      } else if (routeName === '/v1/batches/{id}') {
        drain(req);
        answer(200, batchJson(await api.getBatch(ctx, () => matched.id!)));
      } else if (method === 'POST') {
        const raw = await readBody(req, options.maxBodyBytes);
        // A wait ends early when the client goes away: nobody would read its answer.
        const gone = new AbortController();
        const onClose = () => gone.abort();
        res.once('close', onClose);
        try {
          const created = await api.createGeneration(
            ctx,
            () => ({
              input: parseCreateGenerationBody(parseJsonBody(raw)),
              idempotencyKey: validateIdempotencyKey(headerValue(req.headers['idempotency-key'])),
              waitSeconds: parsePreferWait(req.headers.prefer),
            }),
            { signal: gone.signal },
          );
          if (created.waitedSeconds !== undefined)
            res.setHeader(PREFERENCE_APPLIED, preferenceApplied(created.waitedSeconds));
          answer(201, generationJson(created.generation));
        } finally {
          res.off('close', onClose);
        }
      } else if (matched.id !== undefined) {
        drain(req);
        const view = await api.getGeneration(ctx, () => matched.id!);
        answer(200, generationJson(view));
      } else {
        drain(req);
        const page = await api.listGenerations(ctx, () => parseListQuery(url!.searchParams));
        answer(200, { generations: page.generations.map(generationJson), nextPageToken: page.nextPageToken });
      }
    } catch (err) {
      status = sendError(
        res,
        err,
        (cause) => options.onError?.(cause, requestId),
        () => writeRateLimitHeaders(ctx.rateLimit, (name, value) => res.setHeader(name, value)),
      );
    } finally {
      options.onResponse?.({ route: routeName, method, status, durationMs: performance.now() - started, requestId });
    }
  };
}

/**
 * The request target as a URL. Origin-form ("/v1/…") is taken as a path as is: resolving it
 * against a base would read "//host/v1/generations" as host + path and route it.
 */
function requestUrl(target: string | undefined): URL | undefined {
  if (target === undefined) return undefined;
  try {
    if (target.startsWith('/')) return new URL(`http://gateway.invalid${target}`);
    if (/^https?:\/\//i.test(target)) return new URL(target); // absolute-form (RFC 9112 §3.2.2)
  } catch {
    // not a URL at all
  }
  return undefined;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Discards a body we do not read, so keep-alive connections stay usable. */
function drain(req: Request): void {
  discardRest(req, 0);
}

// An oversized body is read and thrown away after the 413. Closing a connection with unread
// data makes the kernel reset it, and the client then often loses the answer; so the rest is
// drained (Node keeps the connection usable afterwards), up to UNREAD_BODY_DISCARD_LIMIT_BYTES.

/**
 * Reads the body up to the limit. Size and media type are transport checks made before
 * authentication (a huge body is refused without keeping it); everything about the body's
 * content is validation, made after authentication, scope and rate limit.
 */
function readBody(req: Request, limit: number): Promise<Buffer> {
  const tooLarge = () => new BodyError(413, `Request body is larger than ${limit} bytes`);
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    discardRest(req, 0);
    return Promise.reject(tooLarge());
  }
  // Events, not `for await`: leaving an async iterator early destroys the request, and with
  // it the connection, before the 413 is written.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        discardRest(req, size);
        reject(tooLarge());
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      const body = Buffer.concat(chunks);
      if (body.length > 0 && !isJsonMediaType(headerValue(req.headers['content-type']))) {
        reject(new BodyError(415, 'Content-Type must be application/json'));
      } else resolve(body);
    };
    const onClose = () => {
      cleanup();
      // The client went away mid-body; nobody reads this answer.
      reject(validationError([{ field: 'body', issue: 'ended before it was complete' }]));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
  });
}

/** Reads and drops the rest of a refused body; past UNREAD_BODY_DISCARD_LIMIT_BYTES cuts the connection. */
function discardRest(req: Request, alreadyRead: number): void {
  let discarded = alreadyRead;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded <= UNREAD_BODY_DISCARD_LIMIT_BYTES) return;
    if ('stream' in req) req.stream.close();
    else req.socket.destroy();
  });
  req.resume();
}

function isJsonMediaType(value: string | undefined): boolean {
  if (!value) return false;
  const type = value.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/** JSON text -> value; invalid UTF-8, too deep nesting or bad JSON are VALIDATION_ERRORs. */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) throw validationError([{ field: 'body', issue: 'is required (a JSON object)' }]);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw validationError([{ field: 'body', issue: 'is not valid UTF-8' }]);
  }
  const tooDeep = exceedsDepth(text, MAX_JSON_DEPTH);
  if (tooDeep === 'variables') throw validationError([VARIABLES_TOO_DEEP]);
  if (tooDeep !== undefined) {
    throw validationError([{ field: 'body', issue: `must not be nested deeper than ${MAX_JSON_DEPTH} levels` }]);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw validationError([{ field: 'body', issue: 'is not valid JSON' }]);
  }
}

/**
 * Whether JSON text nests deeper than `limit` (brackets outside strings), without parsing it.
 * Returns undefined when it does not, else the top-level member the too deep part is in ('' if
 * none), so that deep `variables` get the same message here as over gRPC and Connect.
 */
function exceedsDepth(text: string, limit: number): string | undefined {
  let depth = 0;
  let inString = false;
  let stringStart = 0;
  let lastString = '';
  let member = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) {
        inString = false;
        if (depth === 1) lastString = text.slice(stringStart, i);
      }
    } else if (c === 34) {
      inString = true;
      stringStart = i + 1;
    } else if (c === 58 && depth === 1) member = lastString;
    else if (c === 123 || c === 91) {
      if (++depth > limit) return member;
    } else if (c === 125 || c === 93) depth--;
  }
  return undefined;
}

export function parseListQuery(params: URLSearchParams): ListGenerationsInput {
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  for (const key of params.keys()) {
    if (!LIST_PARAMS.has(key)) issues.push({ field: key, issue: 'is not a known query parameter' });
    else if (seen.has(key)) issues.push({ field: key, issue: 'must be given at most once' });
    seen.add(key);
  }
  const input: ListGenerationsInput = {};
  const pageSize = params.get('pageSize');
  if (pageSize !== null) {
    if (!/^\d+$/.test(pageSize)) issues.push({ field: 'pageSize', issue: 'must be a non-negative integer' });
    // docs/interface.md#list-generations: larger values are lowered to 100, however many digits they have.
    else input.pageSize = pageSize.length > 9 ? 1_000_000_000 : Number(pageSize);
  }
  const pageToken = params.get('pageToken');
  if (pageToken !== null && pageToken !== '') input.pageToken = pageToken;
  const status = params.get('status');
  if (status !== null) input.status = status;
  const templateId = params.get('templateId');
  if (templateId !== null) input.templateId = templateId;
  const batchId = params.get('batchId');
  if (batchId !== null) input.batchId = batchId;
  for (const field of ['createdAfter', 'createdBefore'] as const) {
    const value = params.get(field);
    if (value === null) continue;
    const date = parseRfc3339(value);
    if (!date) issues.push({ field, issue: 'must be an RFC 3339 date-time' });
    else input[field] = date;
  }
  if (issues.length > 0) throw validationError(issues);
  return input;
}

/** An RFC 3339 date-time, or undefined; Date alone would roll 2026-02-30 over to March. */
export function parseRfc3339(value: string): Date | undefined {
  const m = RFC3339.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 60)
    return undefined;
  const date = new Date(value.toUpperCase());
  return Number.isNaN(date.getTime()) ? undefined : date;
}
