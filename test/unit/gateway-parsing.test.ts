// The REST gateway's pure parts: query parsing (docs/interface.md#list-generations parameters), JSON body
// decoding with its limits, RFC 3339 dates and create-body validation (page tokens:
// test/unit/pagination.test.ts).
import { describe, expect, it } from 'vitest';
import { parseJsonBody, parseListQuery, parseRfc3339 } from '../../gateway/rest-gateway.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { createInputHash, jsonDepth, parseCreateGenerationBody } from '../../src/generations/create-input.ts';

function issues(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('VALIDATION_ERROR');
    return (err as DomainError).details.map((d) => d.field);
  }
  throw new Error('expected a VALIDATION_ERROR');
}

describe('parseListQuery', () => {
  const q = (s: string) => parseListQuery(new URLSearchParams(s));
  it('reads every parameter', () => {
    expect(
      q(
        'pageSize=5&pageToken=t&status=FAILED&templateId=tpl_x&createdAfter=2026-01-01T00:00:00Z&createdBefore=2026-01-02T00:00:00.5%2B01:00',
      ),
    ).toEqual({
      pageSize: 5,
      pageToken: 't',
      status: 'FAILED',
      templateId: 'tpl_x',
      createdAfter: new Date('2026-01-01T00:00:00Z'),
      createdBefore: new Date('2026-01-01T23:00:00.500Z'),
    });
    expect(q('')).toEqual({});
    expect(q('pageToken=')).toEqual({});
  });
  it('lowers huge page sizes instead of refusing them', () => {
    expect(q(`pageSize=${'9'.repeat(30)}`).pageSize).toBeGreaterThan(100);
    expect(q('pageSize=0').pageSize).toBe(0);
  });
  it('refuses bad, unknown and repeated parameters, all at once', () => {
    for (const bad of ['-1', '1.5', '1e3', '', ' 5', '0x1', 'abc'])
      expect(
        issues(() => q(`pageSize=${encodeURIComponent(bad)}`)),
        bad,
      ).toEqual(['pageSize']);
    expect(issues(() => q('foo=1&pageSize=1&pageSize=2&createdAfter=2026-02-30T00:00:00Z')).sort()).toEqual([
      'createdAfter',
      'foo',
      'pageSize',
    ]);
  });
});

describe('parseRfc3339', () => {
  it('accepts RFC 3339 date-times and refuses the rest', () => {
    expect(parseRfc3339('2024-02-29T23:59:59.999Z')?.toISOString()).toBe('2024-02-29T23:59:59.999Z');
    expect(parseRfc3339('2026-01-01t00:00:00z')?.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    for (const bad of [
      '2025-02-29T00:00:00Z',
      '2026-01-01',
      '2026-01-01T00:00:00',
      '2026-01-01T24:00:00Z',
      '2026-01-01T00:00:00+24:00',
      'now',
      '2026-1-1T00:00:00Z',
    ]) {
      expect(parseRfc3339(bad), bad).toBeUndefined();
    }
  });
});

describe('parseJsonBody', () => {
  it('decodes JSON and refuses invalid UTF-8, excessive nesting and bad JSON', () => {
    expect(parseJsonBody(Buffer.from('{"a":[1,{"b":"[[[["}]}'))).toEqual({ a: [1, { b: '[[[[' }] });
    expect(issues(() => parseJsonBody(Buffer.from([0x7b, 0xff, 0x7d])))).toEqual(['body']);
    expect(issues(() => parseJsonBody(Buffer.from('['.repeat(65) + ']'.repeat(65))))).toEqual(['body']);
    expect(parseJsonBody(Buffer.from('['.repeat(64) + ']'.repeat(64)))).toBeDefined();
    expect(issues(() => parseJsonBody(Buffer.from('{"a": "\\"[[[[[[', 'utf8')))).toEqual(['body']);
    expect(issues(() => parseJsonBody(Buffer.alloc(0)))).toEqual(['body']);
  });
});

describe('create body', () => {
  it('validates every rule and defaults variables and format', () => {
    expect(parseCreateGenerationBody({ templateId: 't' })).toEqual({ templateId: 't', variables: {}, format: 'pdf' });
    expect(
      issues(() => parseCreateGenerationBody({ templateId: '', variables: [], format: 'PDF', extra: 1 })).sort(),
    ).toEqual(['extra', 'format', 'templateId', 'variables']);
    expect(issues(() => parseCreateGenerationBody({ templateId: 'x'.repeat(257) }))).toEqual(['templateId']);
  });
  it('measures depth without overflowing on wide values', () => {
    expect(jsonDepth({ a: Array.from({ length: 300_000 }, () => 0) }, 32)).toBe(2);
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(jsonDepth(deep, 32)).toBeGreaterThan(32);
  });
  it('hashes bodies independently of key order', () => {
    const a = createInputHash({ templateId: 't', variables: { x: 1, y: { b: 2, a: 1 } }, format: 'pdf' });
    const b = createInputHash({ templateId: 't', variables: { y: { a: 1, b: 2 }, x: 1 }, format: 'pdf' });
    expect(a).toBe(b);
    expect(createInputHash({ templateId: 't', variables: { x: 2 }, format: 'pdf' })).not.toBe(a);
  });
});
