// The one paging rule (src/store/pagination.ts) in process: page sizes, signed tokens bound to
// their list and query, and the keyset query's shape (the generic list test,
// test/unit/list-endpoints.test.ts, walks every real list with it).
import { describe, expect, it } from 'vitest';
import { ObjectId } from 'mongodb';
import { DomainError } from '../../src/domain/errors.ts';
import {
  checkPageSize,
  keysetFilter,
  NEWEST_FIRST,
  NEWEST_ID_FIRST,
  PageTokens,
  type PageScope,
} from '../../src/store/pagination.ts';

function refusal(fn: () => unknown): { field: string; issue: string }[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('VALIDATION_ERROR');
    return (err as DomainError).details as { field: string; issue: string }[];
  }
  throw new Error('expected a refusal');
}

describe('page size', () => {
  it('defaults to 20, caps at 100, refuses negative and fractional sizes', () => {
    expect(checkPageSize(undefined)).toBe(20);
    expect(checkPageSize(0)).toBe(20);
    expect(checkPageSize(7)).toBe(7);
    expect(checkPageSize(2 ** 31 - 1)).toBe(100);
    for (const bad of [-1, 1.5, Number.NaN])
      expect(refusal(() => checkPageSize(bad))).toEqual([
        { field: 'pageSize', issue: 'must be a non-negative integer' },
      ]);
  });
});

describe('page tokens', () => {
  const scope: PageScope = { list: 'generations', filters: { workspace: 'w1', status: undefined } };
  const tokens = new PageTokens(Buffer.alloc(32, 1));
  const cursor = { id: new ObjectId(), value: new Date('2026-01-01T00:00:00.123Z') };
  const token = tokens.request(undefined, scope).tokenAfter(cursor);
  const invalid = [{ field: 'pageToken', issue: 'is not a valid page token for this query' }];

  it('round-trip to the cursor, dates and strings alike', () => {
    expect(tokens.request({ pageToken: token }, scope).after).toEqual(cursor);
    const byName = { id: new ObjectId(), value: 'logo.png' };
    const named = tokens.request(undefined, { list: 'assets', filters: {} }).tokenAfter(byName);
    expect(tokens.request({ pageToken: named }, { list: 'assets', filters: {} }).after).toEqual(byName);
    // An absent filter and an undefined one are the same query.
    expect(tokens.request({ pageToken: token }, { list: 'generations', filters: { workspace: 'w1' } }).after).toEqual(
      cursor,
    );
  });

  it('are refused for another list, another filter value, another key, and when altered or forged', () => {
    expect(refusal(() => tokens.request({ pageToken: token }, { ...scope, list: 'deliveries' }))).toEqual(invalid);
    expect(refusal(() => tokens.request({ pageToken: token }, { ...scope, filters: { workspace: 'w2' } }))).toEqual(
      invalid,
    );
    expect(
      refusal(() => tokens.request({ pageToken: token }, { ...scope, filters: { workspace: 'w1', status: 'FAILED' } })),
    ).toEqual(invalid);
    expect(refusal(() => new PageTokens(Buffer.alloc(32, 2)).request({ pageToken: token }, scope))).toEqual(invalid);
    const [payload, mac] = token.split('.');
    const edited = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), t: 0 }),
    ).toString('base64url');
    for (const bad of [`${token}x`, `${edited}.${mac}`, 'a.b.c', 'forged', `${payload}.`, '.'])
      expect(
        refusal(() => tokens.request({ pageToken: bad }, scope)),
        bad,
      ).toEqual(invalid);
    // The unsigned admin tokens of older versions (base64 of an id) are refused too.
    const unsigned = Buffer.from(new ObjectId().toHexString()).toString('base64url');
    expect(refusal(() => tokens.request({ pageToken: unsigned }, scope))).toEqual(invalid);
  });

  it('an empty token is the first page', () => {
    expect(tokens.request({ pageToken: '' }, scope).after).toBeUndefined();
  });
});

describe('keyset query', () => {
  const id = new ObjectId();
  it('bounds the sort field at the top level beside the tie-break, so deep pages keep index bounds', () => {
    const at = new Date('2026-03-01T00:00:00Z');
    expect(keysetFilter(NEWEST_FIRST, { id, value: at })).toEqual({
      createdAt: { $lte: at },
      $or: [{ createdAt: { $lt: at } }, { createdAt: at, _id: { $lt: id } }],
    });
    expect(keysetFilter({ field: 'name', kind: 'string', order: 1 }, { id, value: 'b.png' })).toEqual({
      name: { $gte: 'b.png' },
      $or: [{ name: { $gt: 'b.png' } }, { name: 'b.png', _id: { $gt: id } }],
    });
    expect(keysetFilter(NEWEST_ID_FIRST, { id })).toEqual({ _id: { $lt: id } });
  });

  it('refuses a cursor whose value is not of the keyset kind (a token of an older order)', () => {
    expect(refusal(() => keysetFilter(NEWEST_FIRST, { id, value: 'x' }))[0]!.field).toBe('pageToken');
    expect(refusal(() => keysetFilter(NEWEST_FIRST, { id }))[0]!.field).toBe('pageToken');
  });
});
