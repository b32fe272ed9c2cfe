// Validation of a create request (docs/interface.md#create-a-generation), shared by the REST gateway and gRPC/Connect:
// both call createInputIssues(), so the same bad input gets the same message over every
// protocol (REST 422 VALIDATION_ERROR, gRPC/Connect InvalidArgument).
//
// Accepted characters (docs/interface.md#input-rules): variable names may
// hold any Unicode text except control characters (U+0000-U+001F, U+007F-U+009F) and lone
// surrogates; string values may hold any character JSON can carry (NUL and control characters
// included: they are data, escaped when printed) except lone surrogates. Anything else is
// refused with 422 naming the field (e.g. `variables.customer["na\u0000me"]`).
import { createHash } from 'node:crypto';
import { validationError, type FieldIssue } from '../domain/errors.ts';
import type { JsonObject, JsonValue } from '../domain/template.ts';

export interface CreateGenerationInput {
  templateId: string;
  variables: JsonObject;
  format: 'pdf';
}

export const MAX_VARIABLES_DEPTH = 32;
/** Issues reported at most (a body with thousands of bad keys gets a short answer). */
const MAX_ISSUES = 10;
const CONTROL_IN_NAME = /[\u0000-\u001f\u007f-\u009f]/;
/** String values are data: any character JSON can carry is kept as given (only lone surrogates,
 * which cannot be stored as UTF-8, are refused). */
const CONTROL_IN_VALUE = /(?!)/;
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

export const VARIABLES_TOO_DEEP: FieldIssue = {
  field: 'variables',
  issue: `must not be nested deeper than ${MAX_VARIABLES_DEPTH} levels`,
};

function describeChar(text: string, pattern: RegExp): string {
  const c = pattern.exec(text)?.[0];
  if (c === undefined) return 'a lone surrogate (invalid Unicode)';
  return `the control character U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

function childPath(path: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Names and string values that break the character rules (top of this file). */
function textIssues(value: unknown, path: string, issues: FieldIssue[]): void {
  if (issues.length >= MAX_ISSUES) return;
  if (typeof value === 'string') {
    if (CONTROL_IN_VALUE.test(value) || !value.isWellFormed()) {
      issues.push({ field: path, issue: `must not contain ${describeChar(value, CONTROL_IN_VALUE)}` });
    }
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length && issues.length < MAX_ISSUES; i++) textIssues(value[i], `${path}[${i}]`, issues);
  } else if (isPlainObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (issues.length >= MAX_ISSUES) return;
      if (CONTROL_IN_NAME.test(key) || !key.isWellFormed()) {
        issues.push({
          field: childPath(path, key),
          issue: `has a name that contains ${describeChar(key, CONTROL_IN_NAME)}`,
        });
      } else textIssues(child, childPath(path, key), issues);
    }
  }
}

/**
 * The checks every protocol shares, on a templateId string and a variables object already
 * known to be of the right types: lengths, nesting, characters.
 */
export function createInputIssues(templateId: string, variables: Record<string, unknown>): FieldIssue[] {
  return [...templateIdIssues(templateId), ...variablesIssues(variables)];
}

function templateIdIssues(templateId: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (templateId.length < 1) issues.push({ field: 'templateId', issue: 'must be at least 1 character' });
  else if (templateId.length > MAX_TEMPLATE_ID_LENGTH)
    issues.push({ field: 'templateId', issue: `must be at most ${MAX_TEMPLATE_ID_LENGTH} characters` });
  return issues;
}

function variablesIssues(variables: Record<string, unknown>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (jsonDepth(variables, MAX_VARIABLES_DEPTH) > MAX_VARIABLES_DEPTH) issues.push(VARIABLES_TOO_DEEP);
  else textIssues(variables, 'variables', issues);
  return issues;
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
  if (variables === null || (variables !== undefined && !isPlainObject(variables))) {
    issues.push({ field: 'variables', issue: 'must be an object' });
  }
  if (typeof templateId === 'string') issues.push(...templateIdIssues(templateId));
  if (isPlainObject(variables)) issues.push(...variablesIssues(variables));
  if (format !== undefined && format !== 'pdf') issues.push({ field: 'format', issue: 'must be "pdf"' });
  if (issues.length > 0) throw validationError(issues);
  return { templateId: templateId as string, variables: (variables ?? {}) as JsonObject, format: 'pdf' };
}

function canonical(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k] as JsonValue)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of the canonical JSON of a value: key order and whitespace do not matter. */
export function canonicalJsonHash(value: JsonValue): string {
  return createHash('sha256').update(canonical(value)).digest('hex');
}

/** Identifies "the same body" for Idempotency-Key: key order and whitespace do not matter. */
export function createInputHash(input: CreateGenerationInput): string {
  return createHash('sha256')
    .update(canonical({ templateId: input.templateId, variables: input.variables, format: input.format }))
    .digest('hex');
}

export function validateIdempotencyKey(key: string | undefined | null): string | undefined {
  if (key === undefined || key === null) return undefined;
  if (key.length < 1 || key.length > 255) {
    throw validationError([{ field: 'Idempotency-Key', issue: 'must be 1 to 255 characters' }]);
  }
  return key;
}
