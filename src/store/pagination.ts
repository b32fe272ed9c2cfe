// THE paging rule of every list docgen serves: the public generations list (REST and RPC)
// and every admin list. A page is a keyset range: rows come in a fixed order (a sort field,
// then `_id` as the tie-break), and the next page starts after the last row of this one, so a
// walk returns every row that existed when it began exactly once, whatever is inserted
// meanwhile. The token that carries the cursor is opaque and signed (HMAC-SHA256, key derived
// from DOCGEN_SECRET_KEY) and bound to its list and query (workspace and filters): a forged,
// altered or replayed-elsewhere token is a VALIDATION_ERROR on `pageToken`.
import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { ObjectId, type Collection, type Document, type Filter, type Sort, type WithId } from 'mongodb';
import { validationError, type DomainError } from '../domain/errors.ts';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** What a caller asks for: page size (0 or absent: the default) and the previous page's token. */
export interface PageInput {
  pageSize?: number | undefined;
  pageToken?: string | undefined;
}

export interface Page<T> {
  items: T[];
  /** '' on the last page. */
  nextPageToken: string;
}

/**
 * The order of a list: `field` then `_id`, both ascending (1) or descending (-1); `_id` alone
 * when the field is `_id`. `kind` is the type of the field's values (a cursor carries one).
 */
export interface Keyset {
  field: string;
  kind: 'objectId' | 'date' | 'string';
  order: 1 | -1;
}

/** Newest first, for collections whose `_id` is a fresh ObjectId (it starts with its creation time). */
export const NEWEST_ID_FIRST: Keyset = { field: '_id', kind: 'objectId', order: -1 };
export const NEWEST_FIRST: Keyset = { field: 'createdAt', kind: 'date', order: -1 };
export const OLDEST_FIRST: Keyset = { field: 'createdAt', kind: 'date', order: 1 };

/** What a page token is bound to: the list, and every filter that shapes it (the workspace included). */
export interface PageScope {
  /** The list's name ('generations', 'apiKeys', …): a token of one list never pages another. */
  list: string;
  /** Filters; undefined ones count as absent. */
  filters: Record<string, string | undefined>;
}

/** The last row of the previous page: its `_id` and, unless the keyset is `_id` alone, its sort value. */
export interface Cursor {
  id: ObjectId;
  value?: Date | string | undefined;
}

/** A checked request for one page, handed to a repository's list method. */
export interface PageRequest {
  /** Rows on the page, 1 to MAX_PAGE_SIZE. */
  readonly size: number;
  /** Where the page starts; undefined for the first page. */
  readonly after: Cursor | undefined;
  /** The token of the page that follows `last`. */
  tokenAfter(last: Cursor): string;
}

export const invalidPageToken = (): DomainError =>
  validationError([{ field: 'pageToken', issue: 'is not a valid page token for this query' }]);

/** Absent or 0: the default; above the maximum: the maximum; negative or fractional: refused. */
export function checkPageSize(pageSize: number | undefined): number {
  const size = pageSize ?? 0;
  if (!Number.isInteger(size) || size < 0)
    throw validationError([{ field: 'pageSize', issue: 'must be a non-negative integer' }]);
  return size === 0 ? DEFAULT_PAGE_SIZE : Math.min(size, MAX_PAGE_SIZE);
}

export class PageTokens {
  private readonly key: Buffer;
  constructor(secretKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'docgen page tokens v1', 32));
  }

  /** Checks the size and the token against this query (throws VALIDATION_ERROR). */
  request(input: PageInput | undefined, query: PageScope): PageRequest {
    const size = checkPageSize(input?.pageSize);
    const queryHash = hashQuery(query);
    const after = input?.pageToken ? this.open(input.pageToken, queryHash) : undefined;
    return { size, after, tokenAfter: (last) => this.seal(last, queryHash) };
  }

  private seal(cursor: Cursor, queryHash: string): string {
    const fields: Record<string, string | number> = { q: queryHash, i: cursor.id.toHexString() };
    if (cursor.value instanceof Date) fields.t = cursor.value.getTime();
    else if (typeof cursor.value === 'string') fields.s = cursor.value;
    const payload = Buffer.from(JSON.stringify(fields)).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  private open(token: string, queryHash: string): Cursor {
    const [payload, mac, extra] = token.split('.');
    if (!payload || !mac || extra !== undefined) throw invalidPageToken();
    const expected = Buffer.from(this.mac(payload));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalidPageToken();
    let fields: { q?: unknown; i?: unknown; t?: unknown; s?: unknown };
    try {
      fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof fields;
    } catch {
      throw invalidPageToken();
    }
    const { q, i, t, s } = fields;
    if (q !== queryHash || typeof i !== 'string' || !/^[0-9a-f]{24}$/.test(i)) throw invalidPageToken();
    if (t !== undefined && (typeof t !== 'number' || !Number.isFinite(t))) throw invalidPageToken();
    if (s !== undefined && typeof s !== 'string') throw invalidPageToken();
    return { id: new ObjectId(i), value: typeof t === 'number' ? new Date(t) : (s as string | undefined) };
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}

function hashQuery(query: PageScope): string {
  const filters = Object.entries(query.filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(JSON.stringify([query.list, filters]))
    .digest('base64url')
    .slice(0, 22);
}

/**
 * The rows after the cursor, in keyset order. For a sort field the query bounds the field at
 * the top level (`field <= cursor` when descending) beside the `$or` that breaks ties by `_id`,
 * so MongoDB keeps index bounds on the field however deep the page is.
 */
export function keysetFilter<T extends Document>(keyset: Keyset, after: Cursor): Filter<T> {
  const past = keyset.order === -1 ? '$lt' : '$gt';
  if (keyset.field === '_id') return { _id: { [past]: after.id } } as Filter<T>;
  const value = after.value;
  // A token of a list whose order was another (an older docgen) carries another kind of value.
  if (keyset.kind === 'date' ? !(value instanceof Date) : typeof value !== 'string') throw invalidPageToken();
  const atOrPast = keyset.order === -1 ? '$lte' : '$gte';
  return {
    [keyset.field]: { [atOrPast]: value },
    $or: [{ [keyset.field]: { [past]: value } }, { [keyset.field]: value, _id: { [past]: after.id } }],
  } as Filter<T>;
}

/** One page of `filter`'s rows in keyset order, with the token of the next page. */
export async function keysetPage<T extends Document & { _id: ObjectId }>(
  collection: Collection<T>,
  filter: Filter<T>,
  keyset: Keyset,
  page: PageRequest,
): Promise<Page<WithId<T>>> {
  const query = page.after ? ({ $and: [filter, keysetFilter<T>(keyset, page.after)] } as Filter<T>) : filter;
  const sort: Sort =
    keyset.field === '_id' ? { _id: keyset.order } : { [keyset.field]: keyset.order, _id: keyset.order };
  const rows = await collection
    .find(query)
    .sort(sort)
    .limit(page.size + 1)
    .toArray();
  const items = rows.slice(0, page.size);
  const last = items[items.length - 1];
  if (rows.length <= page.size || !last) return { items, nextPageToken: '' };
  const value = keyset.field === '_id' ? undefined : ((last as Record<string, unknown>)[keyset.field] as Date | string);
  return { items, nextPageToken: page.tokenAfter({ id: last._id, value }) };
}
