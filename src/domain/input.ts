// Input checks shared by the admin plane, identity and access. They throw typed domain
// errors, so every transport (Connect today, anything else later) reports the same codes and
// messages.
import type { ObjectId } from 'mongodb';
import { notFound, validationError } from './errors.ts';
import { parseId, type IdKind } from './ids.ts';

export const MAX_NAME_LENGTH = 200;

/** A display name: trimmed, 1..200 characters. */
export function requireName(value: unknown, field = 'name'): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name.length === 0) throw validationError([{ field, issue: 'is required' }]);
  if (name.length > MAX_NAME_LENGTH)
    throw validationError([{ field, issue: `must be at most ${MAX_NAME_LENGTH} characters` }]);
  return name;
}

/**
 * Parses a public id. Empty is a validation error (the caller forgot it); anything that is
 * not an id of this kind cannot name an existing row, so it is reported as not found.
 */
export function requireId(kind: IdKind, value: unknown, field: string, what: string): ObjectId {
  if (typeof value !== 'string' || value === '') throw validationError([{ field, issue: 'is required' }]);
  const id = parseId(kind, value);
  if (!id) throw notFound(`${what} ${quoteId(value)}`);
  return id;
}

/** The workspace a `ws_…` field names (NOT_FOUND when there is none). */
export async function requireWorkspace<W>(
  workspaces: { get(id: ObjectId): Promise<W | null> },
  value: unknown,
  field = 'workspaceId',
): Promise<W> {
  const id = requireId('workspace', value, field, 'Workspace');
  const workspace = await workspaces.get(id);
  if (!workspace) throw notFound(`Workspace ${quoteId(value as string)}`);
  return workspace;
}

/** An id as echoed in a message: bounded, so a huge bogus value does not fill the error. */
export function quoteId(value: string): string {
  return value.length > 64 ? `${value.slice(0, 64)}…` : value;
}
