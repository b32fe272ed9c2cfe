// Validation of a batch create request (docs/interface.md#batches), shared by the REST gateway
// and gRPC/Connect. Each item is checked by the rules of a single generation
// (src/generations/create-input.ts); its problems are named by the item's index
// (`items[3].templateId`), and one bad item refuses the whole batch: nothing is created.
import { validationError, type FieldIssue } from '../domain/errors.ts';
import type { JsonObject } from '../domain/template.ts';
import { createInputIssues, isPlainObject, type CreateGenerationInput } from '../generations/create-input.ts';
import { DEFAULT_MAX_BATCH_ITEMS } from '../config/limits.ts';

export interface CreateBatchInput {
  items: CreateGenerationInput[];
  /** Also one PDF of every completed item, in item order. */
  merge: boolean;
  /** false: no per-item `generation.*` webhook events, only `batch.completed`. */
  itemEvents: boolean;
}

/** Issues reported at most: a batch of 1,000 bad items gets a readable answer. */
export const MAX_BATCH_ISSUES = 50;
const BATCH_FIELDS = new Set(['items', 'merge', 'itemEvents']);
const ITEM_FIELDS = new Set(['templateId', 'variables', 'format']);

/** Problems of the item count (1 to maxItems). */
export function batchSizeIssues(count: number, maxItems: number): FieldIssue[] {
  if (count < 1) return [{ field: 'items', issue: 'must hold at least 1 item' }];
  if (count > maxItems)
    return [{ field: 'items', issue: `must hold at most ${maxItems} items (this batch has ${count}); split it` }];
  return [];
}

/** An item's own problems, each field prefixed with `items[i].`. */
export function batchItemIssues(index: number, templateId: string, variables: Record<string, unknown>): FieldIssue[] {
  return createInputIssues(templateId, variables).map((issue) => ({
    field: `items[${index}].${issue.field}`,
    issue: issue.issue,
  }));
}

/** Checks a parsed JSON body; throws VALIDATION_ERROR listing the problems (at most MAX_BATCH_ISSUES). */
export function parseCreateBatchBody(body: unknown, maxItems = DEFAULT_MAX_BATCH_ITEMS): CreateBatchInput {
  if (!isPlainObject(body)) throw validationError([{ field: 'body', issue: 'must be a JSON object' }]);
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(body)) {
    if (!BATCH_FIELDS.has(key)) issues.push({ field: key, issue: 'is not a known field' });
  }
  const { items, merge, itemEvents } = body;
  if (merge !== undefined && typeof merge !== 'boolean')
    issues.push({ field: 'merge', issue: 'must be true or false' });
  if (itemEvents !== undefined && typeof itemEvents !== 'boolean')
    issues.push({ field: 'itemEvents', issue: 'must be true or false' });
  const parsed: CreateGenerationInput[] = [];
  if (items === undefined) issues.push({ field: 'items', issue: 'is required (an array of {templateId, variables})' });
  else if (!Array.isArray(items)) issues.push({ field: 'items', issue: 'must be an array' });
  else {
    issues.push(...batchSizeIssues(items.length, maxItems));
    if (items.length <= maxItems) {
      items.forEach((item: unknown, index) => {
        if (issues.length >= MAX_BATCH_ISSUES) return;
        const itemInput = parseItem(item, index, issues);
        if (itemInput) parsed.push(itemInput);
      });
    }
  }
  if (issues.length > 0) throw validationError(issues.slice(0, MAX_BATCH_ISSUES));
  return { items: parsed, merge: merge === true, itemEvents: itemEvents !== false };
}

function parseItem(item: unknown, index: number, issues: FieldIssue[]): CreateGenerationInput | undefined {
  const at = `items[${index}]`;
  if (!isPlainObject(item)) {
    issues.push({ field: at, issue: 'must be an object {templateId, variables}' });
    return undefined;
  }
  const before = issues.length;
  for (const key of Object.keys(item)) {
    if (!ITEM_FIELDS.has(key)) issues.push({ field: `${at}.${key}`, issue: 'is not a known field' });
  }
  const { templateId, variables, format } = item;
  if (templateId === undefined) issues.push({ field: `${at}.templateId`, issue: 'is required' });
  else if (typeof templateId !== 'string') issues.push({ field: `${at}.templateId`, issue: 'must be a string' });
  if (variables === null || (variables !== undefined && !isPlainObject(variables)))
    issues.push({ field: `${at}.variables`, issue: 'must be an object' });
  if (format !== undefined && format !== 'pdf') issues.push({ field: `${at}.format`, issue: 'must be "pdf"' });
  if (typeof templateId === 'string')
    issues.push(...batchItemIssues(index, templateId, isPlainObject(variables) ? variables : {}));
  if (issues.length > before) return undefined;
  return { templateId: templateId as string, variables: (variables ?? {}) as JsonObject, format: 'pdf' };
}
