// Validation of a create request (docs/interface.md#create-a-generation), shared by the REST gateway and gRPC/Connect.
import { createHash } from 'node:crypto';
import { validationError, type FieldIssue } from '../domain/errors.ts';
import type { JsonObject, JsonValue } from '../domain/template.ts';

export interface CreateGenerationInput {
  templateId: string;
  variables: JsonObject;
  format: 'pdf';
}

export const MAX_VARIABLES_DEPTH = 32;
export const MAX_TEMPLATE_ID_LENGTH = 256;
const ALLOWED_FIELDS = new Set(['templateId', 'variables', 'format']);

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function jsonDepth(value: unknown, limit: number, depth = 0): number {
  if (depth > limit) return depth;
  if (!Array.isArray(value) && !isPlainObject(value)) return depth;
  // A loop, not Math.max(...children): spreading a 500k-element array overflows the stack.
  let deepest = depth + 1;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    deepest = Math.max(deepest, jsonDepth(child, limit, depth + 1));
    if (deepest > limit) break;
  }
  return deepest;
}

/** Checks a parsed JSON body; throws VALIDATION_ERROR listing every problem. */
export function parseCreateGenerationBody(body: unknown): CreateGenerationInput {
  if (!isPlainObject(body)) throw validationError([{ field: 'body', issue: 'must be a JSON object' }]);
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(body)) {
    if (!ALLOWED_FIELDS.has(key)) issues.push({ field: key, issue: 'is not a known field' });
  }
  const { templateId, variables, format } = body;
  if (templateId === undefined) issues.push({ field: 'templateId', issue: 'is required' });
  else if (typeof templateId !== 'string') issues.push({ field: 'templateId', issue: 'must be a string' });
  else if (templateId.length < 1) issues.push({ field: 'templateId', issue: 'must be at least 1 character' });
  else if (templateId.length > MAX_TEMPLATE_ID_LENGTH) issues.push({ field: 'templateId', issue: `must be at most ${MAX_TEMPLATE_ID_LENGTH} characters` });
  if (variables !== undefined && variables !== null && !isPlainObject(variables)) {
    issues.push({ field: 'variables', issue: 'must be an object' });
  } else if (isPlainObject(variables) && jsonDepth(variables, MAX_VARIABLES_DEPTH) > MAX_VARIABLES_DEPTH) {
    issues.push({ field: 'variables', issue: `must not be nested deeper than ${MAX_VARIABLES_DEPTH} levels` });
  }
  if (variables === null) issues.push({ field: 'variables', issue: 'must be an object' });
  if (format !== undefined && format !== 'pdf') issues.push({ field: 'format', issue: 'must be "pdf"' });
  if (issues.length > 0) throw validationError(issues);
  return { templateId: templateId as string, variables: (variables ?? {}) as JsonObject, format: 'pdf' };
}

function canonical(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k] as JsonValue)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Identifies "the same body" for Idempotency-Key: key order and whitespace do not matter. */
export function createInputHash(input: CreateGenerationInput): string {
  return createHash('sha256').update(canonical({ templateId: input.templateId, variables: input.variables, format: input.format })).digest('hex');
}

export function validateIdempotencyKey(key: string | undefined | null): string | undefined {
  if (key === undefined || key === null) return undefined;
  if (key.length < 1 || key.length > 255) {
    throw validationError([{ field: 'Idempotency-Key', issue: 'must be 1 to 255 characters' }]);
  }
  return key;
}
