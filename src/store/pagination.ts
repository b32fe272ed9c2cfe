// Keyset pagination over `_id` descending (newest first, since ObjectIds start with their
// creation time). Used by the admin lists; the public list has its own signed tokens.
import { ObjectId, type Collection, type Document, type Filter, type WithId } from 'mongodb';
import { validationError } from '../domain/errors.ts';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export function clampPageSize(pageSize: number | undefined): number {
  if (!pageSize || pageSize <= 0) return DEFAULT_PAGE_SIZE;
  return Math.min(Math.floor(pageSize), MAX_PAGE_SIZE);
}

export interface Page<T> {
  items: T[];
  nextPageToken: string;
}

export async function pageByIdDesc<T extends Document & { _id: ObjectId }>(
  collection: Collection<T>,
  filter: Filter<T>,
  pageSize: number | undefined,
  pageToken: string | undefined,
): Promise<Page<WithId<T>>> {
  const size = clampPageSize(pageSize);
  let query = filter;
  if (pageToken) {
    const hex = Buffer.from(pageToken, 'base64url').toString('utf8');
    if (!/^[0-9a-f]{24}$/.test(hex))
      throw validationError([{ field: 'pageToken', issue: 'is not a valid page token' }]);
    query = { $and: [filter, { _id: { $lt: new ObjectId(hex) } }] } as Filter<T>;
  }
  const rows = await collection
    .find(query)
    .sort({ _id: -1 })
    .limit(size + 1)
    .toArray();
  const items = rows.slice(0, size);
  const last = items[items.length - 1];
  const nextPageToken = rows.length > size && last ? Buffer.from(last._id.toHexString()).toString('base64url') : '';
  return { items, nextPageToken };
}
